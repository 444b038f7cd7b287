import Dispatch
import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

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

    // DispatchSources are safe to use from any thread; Dispatch does not mark them Sendable.
    nonisolated(unsafe) private let sources: [any DispatchSourceProtocol]
    /// How the directory is watched.
    let mode: Mode
    /// Schedules the handler (coalesced with events already seen).
    private let changed: @Sendable () -> Void

    /// Starts watching `directory`.
    ///
    /// With inotify the watch follows the path, not the directory first found there: when
    /// the directory is removed, renamed or replaced, the watch is armed again on whatever
    /// directory the path names (checked on every event and every second), and the handler
    /// is called.
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
        switch InotifyWatch.make(directory) {
        case .success(let watch):
            let read = DispatchSource.makeReadSource(fileDescriptor: watch.descriptor, queue: queue)
            read.setEventHandler {
                var buffer = [UInt8](repeating: 0, count: 4096)
                while Glibc.read(watch.descriptor, &buffer, buffer.count) > 0 {}
                watch.rearmIfReplaced()
                changed()
            }
            read.setCancelHandler { close(watch.descriptor) }
            let check = DispatchSource.makeTimerSource(queue: queue)
            check.setEventHandler {
                if watch.rearmIfReplaced() { changed() }
            }
            check.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1), leeway: .milliseconds(100))
            sources = [read, check]
            mode = .inotify
        case .failure(let failure):
            let timer = DispatchSource.makeTimerSource(queue: queue)
            let last = Fingerprint()
            let path = directory.path
            last.update(Self.fingerprint(path))
            timer.setEventHandler {
                if last.update(Self.fingerprint(path)) { changed() }
            }
            timer.schedule(deadline: .now() + .seconds(1), repeating: .seconds(1), leeway: .milliseconds(100))
            sources = [timer]
            mode = .polling(reason: failure.reason)
        }
        for source in sources { source.resume() }
    }

    deinit {
        for source in sources { source.cancel() }
    }

    /// Calls the handler soon, as if the directory had changed.
    func trigger() {
        changed()
    }

    /// Stops watching.
    func cancel() {
        for source in sources { source.cancel() }
    }

    /// The listing of the directory at `path` with each entry's size, change time and mode:
    /// any edit, rename, removal or permission change alters it. Read with `opendir` and
    /// `stat` alone: it runs every second, and an idle prefsd keeps mapped only the code it
    /// runs (docs/benchmarks.md, "prefsd's memory").
    static func fingerprint(_ path: String) -> [String] {
        var entries: [String] = []
        var info = stat()
        if stat(path, &info) == 0 {
            entries.append(".\(info.st_mode) \(info.st_uid) \(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec)")
        }
        for name in entryNames(path).sorted() {
            guard stat(path + "/" + name, &info) == 0 else { continue }
            entries.append(
                "\(name) \(info.st_size) \(info.st_mode) \(info.st_ctim.tv_sec).\(info.st_ctim.tv_nsec) \(info.st_mtim.tv_sec).\(info.st_mtim.tv_nsec)")
        }
        return entries
    }

    /// The names in the directory at `path`, without `.` and `..`; none when it cannot be read.
    private static func entryNames(_ path: String) -> [String] {
        guard let stream = opendir(path) else { return [] }
        defer { closedir(stream) }
        var names: [String] = []
        while let entry = readdir(stream) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { bytes in
                String(decoding: bytes.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }
}

/// An inotify watch on the directory a path names, armed again when that directory is
/// replaced. Used on the watcher's queue only; the mutex makes it Sendable.
private final class InotifyWatch: Sendable {
    let descriptor: Int32
    let path: String
    /// The watch descriptor and the identity (device, inode) of the directory it watches,
    /// or `nil` while the path names no directory.
    private let armed = Mutex<(watch: Int32, device: UInt, inode: UInt)?>(nil)

    private static let mask = UInt32(
        IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// An inotify instance watching `directory`.
    static func make(_ directory: URL) -> Result<InotifyWatch, WatchFailure> {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return .failure(WatchFailure("inotify is unavailable: \(String(cString: strerror(errno)))")) }
        let watch = InotifyWatch(descriptor: descriptor, path: directory.path)
        guard watch.arm() else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            return .failure(WatchFailure("cannot watch it with inotify: \(reason)"))
        }
        return .success(watch)
    }

    /// Arms the watch on the directory the path names now; returns whether it is armed.
    private func arm() -> Bool {
        var info = stat()
        guard stat(path, &info) == 0 else { return false }
        guard (info.st_mode & S_IFMT) == S_IFDIR else { errno = ENOTDIR; return false }
        let watch = inotify_add_watch(descriptor, path, Self.mask)
        guard watch >= 0 else { return false }
        armed.withLock { $0 = (watch, UInt(info.st_dev), UInt(info.st_ino)) }
        return true
    }

    /// Arms the watch again when the path no longer names the directory watched (removed,
    /// renamed, replaced); returns whether anything changed, so the caller reloads.
    @discardableResult
    func rearmIfReplaced() -> Bool {
        var info = stat()
        let exists = stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        let current = armed.withLock { $0 }
        if let current, exists, current.device == UInt(info.st_dev), current.inode == UInt(info.st_ino) { return false }
        if current == nil && !exists { return false }
        if let current { inotify_rm_watch(descriptor, current.watch) }
        armed.withLock { $0 = nil }
        _ = arm()
        return true
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
