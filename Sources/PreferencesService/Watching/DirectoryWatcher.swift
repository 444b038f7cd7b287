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
/// It uses inotify, following the path (``InotifyPathWatch``): a directory that does not
/// exist yet is seen when it is made, and one removed or replaced when that happens, with
/// nothing polled. When inotify cannot be had (the per-user limit of inotify instances or
/// watches is reached, or a directory on the way cannot be read) it polls the directory's
/// listing and file times every second instead, so a managed file is never missed for long.
final class DirectoryWatcher: Sendable {
    /// How the directory is watched.
    enum Mode: Sendable, Equatable {
        case inotify
        case polling(reason: String)
    }

    /// The inotify watch, or nil while polling.
    private let watch: InotifyPathWatch?
    // DispatchSources are safe to use from any thread; Dispatch does not mark them Sendable.
    /// The poller's timer, or nil with inotify.
    nonisolated(unsafe) private let timer: (any DispatchSourceTimer)?
    /// How the directory is watched.
    let mode: Mode
    /// Schedules the handler (coalesced with events already seen).
    private let changed: @Sendable () -> Void
    /// Set once cancelled: no retry arms the watch again after that.
    private let stopped = ScheduledFlag()

    /// Starts watching `directory`.
    ///
    /// With inotify the watch follows the path, not the directory first found there: when a
    /// directory is made at the path, or the one there is removed, renamed or replaced, the
    /// watch is armed again on whatever directory the path names, and the handler is called.
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
        // Arming again failed (a limit reached, a directory on the way unreadable): tried
        // again every second until it succeeds.
        let retry = ScheduledFlag()
        let stopped = stopped
        @Sendable func follow(_ watch: InotifyPathWatch, _ outcome: InotifyPathWatch.Outcome) {
            changed()
            guard case .failed = outcome, retry.set() else { return }
            queue.asyncAfter(deadline: .now() + .seconds(1)) { [weak watch] in
                retry.clear()
                guard !stopped.isSet, let watch else { return }
                follow(watch, watch.retry())
            }
        }
        switch InotifyPathWatch.make(path: directory.standardizedFileURL.path, queue: queue, outcome: follow) {
        case .success(let watch):
            self.watch = watch
            timer = nil
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
            timer.resume()
            self.watch = nil
            self.timer = timer
            mode = .polling(reason: failure.reason)
        }
    }

    deinit {
        cancel()
    }

    /// Calls the handler soon, as if the directory had changed.
    func trigger() {
        changed()
    }

    /// Stops watching.
    func cancel() {
        guard stopped.set() else { return }
        watch?.cancel()
        timer?.cancel()
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

/// A flag set once until cleared: whether a coalesced call to the handler or a retry is
/// already scheduled, or whether the watcher is cancelled.
private final class ScheduledFlag: Sendable {
    private let flag = Mutex(false)

    /// Sets the flag; returns false if it was set already.
    func set() -> Bool {
        flag.withLock { flag in
            defer { flag = true }
            return !flag
        }
    }

    /// Clears the flag.
    func clear() { flag.withLock { $0 = false } }

    /// Whether the flag is set.
    var isSet: Bool { flag.withLock { $0 } }
}
