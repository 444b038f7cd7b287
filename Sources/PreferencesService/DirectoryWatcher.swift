#if canImport(Glibc)
import Glibc
#endif
import Dispatch
import Foundation
import Synchronization

/// Calls a handler, on its own queue, shortly after anything in a directory changes: files
/// created, written, renamed, removed or given new permissions. Bursts of events are
/// coalesced into one call.
///
/// It uses inotify. When inotify cannot be had (the per-user limit of inotify instances is
/// reached, or the directory does not exist yet) it polls the directory's listing and file
/// times every second instead, so a managed file is never missed for long.
final class DirectoryWatcher: Sendable {
    /// How the directory is watched.
    enum Mode: Sendable, Equatable {
        case inotify
        case polling(reason: String)
    }

    // A DispatchSource is safe to use from any thread; Dispatch does not mark it Sendable.
    nonisolated(unsafe) private let source: any DispatchSourceProtocol
    /// How the directory is watched.
    let mode: Mode
    /// Schedules the handler (coalesced with events already seen).
    private let changed: @Sendable () -> Void

    /// Starts watching `directory`.
    init(directory: URL, delay: DispatchTimeInterval = .milliseconds(100), handler: @escaping @Sendable () -> Void) {
        let queue = DispatchQueue(label: "prefsd.managed-directory")
        let scheduled = ScheduledFlag()
        let changed: @Sendable () -> Void = {
            guard scheduled.set() else { return }
            queue.asyncAfter(deadline: .now() + delay) {
                scheduled.clear()
                handler()
            }
        }
        self.changed = changed
        switch Self.inotify(directory) {
        case .success(let descriptor):
            let read = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: queue)
            read.setEventHandler {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while Glibc.read(descriptor, &buffer, buffer.count) > 0 {}
                changed()
            }
            read.setCancelHandler { close(descriptor) }
            source = read
            mode = .inotify
        case .failure(let failure):
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let last = Fingerprint()
            last.update(Self.fingerprint(directory))
            timer.setEventHandler {
                if last.update(Self.fingerprint(directory)) { changed() }
            }
            timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1), leeway: .milliseconds(100))
            source = timer
            mode = .polling(reason: failure.reason)
        }
        source.resume()
    }

    deinit {
        source.cancel()
    }

    /// Calls the handler soon, as if the directory had changed.
    func trigger() {
        changed()
    }

    /// Stops watching.
    func cancel() {
        source.cancel()
    }

    private static func inotify(_ directory: URL) -> Result<Int32, WatchFailure> {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return .failure(WatchFailure("inotify is unavailable: \(String(cString: strerror(errno)))")) }
        let mask = UInt32(IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
        guard inotify_add_watch(descriptor, directory.path, mask) >= 0 else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            return .failure(WatchFailure("cannot watch it with inotify: \(reason)"))
        }
        return .success(descriptor)
    }

    /// The directory's listing with each entry's size, change time and mode: any edit,
    /// rename, removal or permission change alters it.
    private static func fingerprint(_ directory: URL) -> [String] {
        var entries: [String] = []
        var info = stat()
        if stat(directory.path, &info) == 0 {
            entries.append(".\(info.st_mode) \(info.st_uid) \(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)")
        }
        for name in ((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []).sorted() {
            guard stat(directory.appendingPathComponent(name).path, &info) == 0 else { continue }
            entries.append("\(name) \(info.st_size) \(info.st_mode) \(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)")
        }
        return entries
    }

}

/// Why inotify could not watch the directory.
private struct WatchFailure: Error {
    let reason: String
    init(_ reason: String) { self.reason = reason }
}

/// The last fingerprint the poller saw.
private final class Fingerprint: Sendable {
    private let last = Mutex<[String]>([])

    /// Stores `now`; returns whether it differs from what was stored.
    @discardableResult
    func update(_ now: [String]) -> Bool {
        last.withLock { last in
            defer { last = now }
            return last != now
        }
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
