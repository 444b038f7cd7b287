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
/// It uses inotify, on the directory and on its nearest existing ancestor, so that it wakes
/// only when something happens: a directory that does not exist yet is seen as soon as it
/// is made. When inotify cannot be had (the per-user limit of inotify instances or watches
/// is reached) it polls the directory's listing and file times every second instead, so a
/// managed file is never missed for long.
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
    /// the directory is made, removed, renamed or replaced, which its nearest existing
    /// ancestor's watch reports, the watch is armed again on whatever directory the path
    /// names, and the handler is called.
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
                if watch.readEvents() { changed() }
            }
            read.setCancelHandler { close(watch.descriptor) }
            sources = [read]
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

/// An inotify instance following the directory a path names: a watch on that directory
/// while there is one, and a watch on the path's nearest existing ancestor, which sees the
/// path's next component made, removed, renamed or replaced. Used on the watcher's queue
/// only; the mutex makes it Sendable.
private final class InotifyWatch: Sendable {
    let descriptor: Int32
    let path: String

    /// A watch and the identity (device, inode) of the directory it watches.
    private struct Watch: Equatable {
        var watch: Int32
        var device: UInt
        var inode: UInt
    }

    /// The directory's watch (nil while the path names no directory) and its nearest
    /// existing ancestor's.
    private let armed = Mutex<(directory: Watch?, ancestor: Watch?)>((nil, nil))

    private static let directoryMask = UInt32(
        IN_CREATE | IN_DELETE | IN_MODIFY | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_ATTRIB | IN_DELETE_SELF | IN_MOVE_SELF)
    private static let ancestorMask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF)

    private init(descriptor: Int32, path: String) {
        self.descriptor = descriptor
        self.path = path
    }

    /// An inotify instance following `directory`, or why there can be none.
    static func make(_ directory: URL) -> Result<InotifyWatch, WatchFailure> {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return .failure(WatchFailure("inotify is unavailable: \(String(cString: strerror(errno)))")) }
        let watch = InotifyWatch(descriptor: descriptor, path: directory.path)
        watch.rearm()
        // The directory itself when there is one, else an ancestor that tells when it comes.
        var info = stat()
        let exists = stat(watch.path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        let armed = watch.armed.withLock { exists ? $0.directory != nil : $0.ancestor != nil }
        guard armed else {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            return .failure(WatchFailure("cannot watch it with inotify: \(reason)"))
        }
        return .success(watch)
    }

    /// Reads the events that have come; returns whether the directory may have changed: an
    /// event in it, or the path naming another directory or none (the watches are then
    /// armed again). Events of the ancestor about other names change nothing.
    func readEvents() -> Bool {
        var buffer = [UInt8](repeating: 0, count: 4096)
        var fromDirectory = false
        var fromAncestor = false
        let (directory, ancestor) = armed.withLock { ($0.directory?.watch, $0.ancestor?.watch) }
        while true {
            let count = buffer.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            guard count > 0 else { break }
            // Each event: the watch (Int32), mask, cookie and name length (UInt32), the name.
            var offset = 0
            while offset + 16 <= count {
                let (watch, mask, length) = buffer.withUnsafeBytes { bytes in
                    (
                        bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self),
                        bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self),
                        Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    )
                }
                if mask & UInt32(IN_Q_OVERFLOW) != 0 || watch == directory {
                    fromDirectory = true
                } else if watch == ancestor {
                    fromAncestor = true
                }
                offset += 16 + length
            }
        }
        let replaced = fromDirectory || fromAncestor ? rearm() : false
        return fromDirectory || replaced
    }

    /// Arms the watches on what the path names now: the directory (when it is one) and the
    /// nearest existing ancestor; returns whether the directory is another than before.
    @discardableResult
    private func rearm() -> Bool {
        let current = armed.withLock { $0 }
        let directory = rewatch(current.directory, on: path, mask: Self.directoryMask)
        var ancestor = current.ancestor
        var above = Self.parent(of: path)
        while true {
            var info = stat()
            if stat(above, &info) == 0, (info.st_mode & S_IFMT) == S_IFDIR {
                ancestor = rewatch(current.ancestor, on: above, mask: Self.ancestorMask)
                if ancestor != nil || above == "/" { break }
            } else if above == "/" {
                break
            }
            above = Self.parent(of: above)
        }
        armed.withLock { $0 = (directory, ancestor) }
        return directory?.device != current.directory?.device || directory?.inode != current.directory?.inode
    }

    /// The watch on the directory at `path`: `previous` while that is still the directory
    /// there, a new one otherwise (`previous` removed), nil when `path` names no directory
    /// or it cannot be watched.
    private func rewatch(_ previous: Watch?, on path: String, mask: UInt32) -> Watch? {
        var info = stat()
        let exists = stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFDIR
        if let previous, exists, previous.device == UInt(info.st_dev), previous.inode == UInt(info.st_ino) {
            // The same directory; the path it is watched under may differ (an ancestor
            // deeper than before): the mask is set again on it.
            let watch = inotify_add_watch(descriptor, path, mask)
            if watch == previous.watch { return previous }
            if watch >= 0 { return Watch(watch: watch, device: UInt(info.st_dev), inode: UInt(info.st_ino)) }
        }
        if let previous { inotify_rm_watch(descriptor, previous.watch) }
        guard exists else { return nil }
        let watch = inotify_add_watch(descriptor, path, mask)
        guard watch >= 0 else { return nil }
        return Watch(watch: watch, device: UInt(info.st_dev), inode: UInt(info.st_ino))
    }

    /// The directory above `path` ("/" above a top-level name and above "/").
    private static func parent(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/"), slash != path.startIndex else { return "/" }
        return String(path[..<slash])
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
