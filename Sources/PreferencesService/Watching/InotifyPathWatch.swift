import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// An inotify watch that follows a path, not the directory first found there: it watches the
/// directory the path names for changes to its entries, and every directory on the way to it
/// ("/" first) for the next name on the way being made, removed or renamed. A directory
/// made at the path (or any directory above it made), removed or replaced is seen when it
/// happens, with nothing polled: an idle prefsd is not woken while nothing on the way
/// changes. A file system mounted over a directory on the way is not seen: inotify reports
/// no mounts.
///
/// Its watches are on the process's one inotify instance (``InotifyInstance``); its events
/// and its arming run on its queue.
final class InotifyPathWatch: Sendable {
    /// What the events say.
    enum Outcome: Equatable {
        /// The watched directory's entries changed, or the path names another directory (or
        /// none, or one where there was none).
        case changed
        /// The watches could not all be armed again (the reason): try again later.
        case failed(String)
    }

    private let instance: InotifyInstance
    /// The directories on the way, "/" first, the watched path last.
    private let way: [String]
    /// The name each directory on the way watches for (the next one's last component); the
    /// watched directory's own, unused.
    private let next: [String]
    private let armed = Mutex(Armed())

    /// What is watched now.
    private struct Armed {
        /// Each watch descriptor's place on the way.
        var places: [Int32: Int] = [:]
        /// The identity (device, inode) of the directory at the path, or `nil` while there is none.
        var directory: FileIdentity?
        /// Set by ``cancel()``: arming adds nothing after it, and lets go of what it added.
        var cancelled = false
    }

    /// A file's device and inode.
    private struct FileIdentity: Equatable {
        let device: UInt
        let inode: UInt
    }

    /// What a directory on the way is watched for: its entries made, removed or renamed, and
    /// itself removed or renamed.
    private static let wayMask = UInt32(IN_CREATE | IN_DELETE | IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF | IN_MOVE_SELF | IN_ONLYDIR)
    /// What the watched directory is watched for: any change to its entries or itself.
    private static let directoryMask = wayMask | UInt32(IN_MODIFY | IN_CLOSE_WRITE | IN_ATTRIB)
    /// The events that mean a watched directory itself is gone from where it was.
    private static let gone = UInt32(IN_DELETE_SELF | IN_MOVE_SELF | IN_IGNORED | IN_UNMOUNT)

    private init(instance: InotifyInstance, path: String) {
        self.instance = instance
        var way = ["/"]
        for component in path.split(separator: "/") where component != "." {
            way.append(way.count == 1 ? "/" + component : way[way.count - 1] + "/" + component)
        }
        self.way = way
        self.next = way.dropFirst().map { String($0.split(separator: "/").last ?? "") } + [""]
    }

    /// Follows `path` (absolute, standardized), calling `outcome` with the watch on `queue`
    /// whenever its directory changes; or why inotify cannot. Not to be called on `queue`.
    static func make(
        path: String, queue: DispatchQueue, outcome: @escaping @Sendable (InotifyPathWatch, Outcome) -> Void
    ) -> Result<InotifyPathWatch, InotifyWatchFailure> {
        let instance: InotifyInstance
        switch InotifyInstance.shared {
        case .success(let shared): instance = shared
        case .failure(let failure): return .failure(failure)
        }
        let watch = InotifyPathWatch(instance: instance, path: path)
        instance.subscribe(ObjectIdentifier(watch), queue: queue) { [weak watch] events in
            guard let watch, let result = watch.handle(events) else { return }
            outcome(watch, result)
        }
        // On the queue, as every later arming: events may come as soon as the first watch is added.
        if case .failure(let failure) = queue.sync(execute: { watch.arm() }) {
            watch.cancel()
            return .failure(failure)
        }
        return .success(watch)
    }

    /// Stops watching.
    func cancel() {
        armed.withLock { $0.cancelled = true }
        instance.unsubscribe(ObjectIdentifier(self))
    }

    /// Arms the watches again after a failure; the outcome to follow.
    func retry() -> Outcome {
        switch arm() {
        case .success: return .changed
        case .failure(let failure): return .failed(failure.reason)
        }
    }

    /// Arms the watches again when something on the way changed; what the events say, or
    /// nil when nothing of the watched directory changed.
    private func handle(_ events: [InotifyInstance.Event]) -> Outcome? {
        let places = armed.withLock { $0.places }
        var changed = false
        var rearm = false
        for event in events {
            if event.watch == -1 {
                // Events were lost.
                changed = true
                rearm = true
                continue
            }
            // A watch let go of on arming again may report once more.
            guard let place = places[event.watch] else { continue }
            if event.mask & Self.gone != 0 {
                rearm = true
            } else if place == way.count - 1 {
                changed = true
            } else if event.name == next[place] {
                rearm = true
            }
        }
        guard rearm else { return changed ? .changed : nil }
        switch arm() {
        case .success(let replaced): return changed || replaced ? .changed : nil
        case .failure(let failure): return .failed(failure.reason)
        }
    }

    /// Watches each directory on the way that exists now, from "/" down (each before the one
    /// below it, so that one made meanwhile is seen), and the path's directory when it exists;
    /// lets go of what is no longer on the way. Returns whether the path names another
    /// directory than before.
    private func arm() -> Result<Bool, InotifyWatchFailure> {
        let subscriber = ObjectIdentifier(self)
        var places: [Int32: Int] = [:]
        var directory: FileIdentity?
        var failure: InotifyWatchFailure?
        for (place, path) in way.enumerated() {
            let isDirectory = place == way.count - 1
            let added = instance.addWatch(path, mask: isDirectory ? Self.directoryMask : Self.wayMask, for: subscriber)
            guard case .success(let watch) = added else {
                // The way ends here: the watch above sees it made.
                if case .failure(let error) = added, error.code != ENOENT && error.code != ENOTDIR {
                    failure = InotifyWatchFailure("cannot watch \(path) with inotify: \(String(cString: strerror(error.code)))")
                }
                break
            }
            places[watch] = place
            var info = stat()
            if isDirectory, stat(path, &info) == 0 {
                directory = FileIdentity(device: UInt(info.st_dev), inode: UInt(info.st_ino))
            }
        }
        let (stale, replaced) = armed.withLock { armed -> ([Int32], Bool) in
            // Cancelled while arming: what was added after the cancel's unsubscribing goes.
            if armed.cancelled { return (Array(places.keys), false) }
            let stale = armed.places.keys.filter { places[$0] == nil }
            let replaced = armed.directory != directory
            armed.places = places
            armed.directory = directory
            return (stale, replaced)
        }
        for watch in stale { instance.removeWatch(watch, for: subscriber) }
        if let failure { return .failure(failure) }
        return .success(replaced)
    }
}

/// Why inotify cannot follow a path.
struct InotifyWatchFailure: Error {
    /// What went wrong, for the log.
    let reason: String

    init(_ reason: String) { self.reason = reason }
}
