#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization

/// Calls a handler, on its own queue, shortly after anything in a directory changes
/// (inotify): files created, written, renamed, removed or given new permissions. Bursts
/// of events are coalesced into one call.
final class DirectoryWatcher: Sendable {
    // A DispatchSource is safe to use from any thread; Dispatch does not mark it Sendable.
    nonisolated(unsafe) private let source: any DispatchSourceRead

    /// Starts watching `directory`, or returns `nil` when it cannot be watched (it does not
    /// exist, or inotify is unavailable).
    init?(directory: URL, delay: DispatchTimeInterval = .milliseconds(100), handler: @escaping @Sendable () -> Void) {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return nil }
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
        guard inotify_add_watch(descriptor, directory.path, mask) >= 0 else {
            close(descriptor)
            return nil
        }
        let queue = DispatchQueue(label: "prefsd.managed-directory")
        source = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
        let scheduled = ScheduledFlag()
        source.setEventHandler {
            var buffer = [UInt8](repeating: 0, count: 4096)
            while read(descriptor, &buffer, buffer.count) > 0 {}
            guard scheduled.set() else { return }
            queue.asyncAfter(deadline: .now() + delay) {
                scheduled.clear()
                handler()
            }
        }
        source.setCancelHandler { close(descriptor) }
        source.resume()
    }

    deinit {
        source.cancel()
    }

    /// Stops watching.
    func cancel() {
        source.cancel()
    }
}

/// Whether a coalesced call is already scheduled.
private final class ScheduledFlag: Sendable {
    private let isSet = Mutex(false)

    /// Sets the flag; returns false if it was set already.
    func set() -> Bool {
        isSet.withLock { isSet in
            defer { isSet = true }
            return !isSet
        }
    }

    /// Clears the flag.
    func clear() { isSet.withLock { $0 = false } }
}
