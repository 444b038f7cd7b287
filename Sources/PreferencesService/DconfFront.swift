import Dconf
import Dispatch
import Foundation
import Logging
import PreferencesModel
import Synchronization

/// What ``DconfFront`` asks of the service it serves for.
protocol DconfFrontService: AnyObject, Sendable {
    /// The committed values of `keys` of `domain` (`nil`: not stored).
    func storedValues(domain: DomainName, keys: [String]) -> [String: PropertyListValue?]
    /// Emits dconf's `Notify` with `tag`.
    func notify(_ notification: DconfNotification, tag: String)
}

/// prefsd as dconf-service: keeps dconf's database file a mirror of the store and tells
/// dconf's clients of every change, whichever interface made it.
///
/// Every committed change of a persistent domain becomes a job on one serial queue. The
/// queue takes every job waiting, brings the mirror's values up to date for the keys they
/// touched (read from the committed state), replaces the file once if anything in it
/// changed, sets dconf's invalidation flag, and then, job by job in order, answers the
/// `Change` that made it (if one did) and emits `Notify` for what it changed. So a
/// `dconf read` after `dconf write` returns reads the new value, and a burst of native
/// writes rewrites the file once.
///
/// Jobs that answer no `Change` (native writes) do not rewrite the file sooner than
/// ``nativePause(after:)`` after the last rewrite, twenty times what that rewrite took:
/// the queue spends at most about a twentieth of its time rewriting the file for a stream
/// of native writes, not a rewrite per write, and their `Notify` comes up to that much
/// later (about a millisecond for a small database, some 40 ms at 10,000 keys). A lone
/// native write after a quiet spell, and a `Change`, are never held back.
final class DconfFront: Sendable {
    /// A change waiting for the mirror.
    struct Job: Sendable {
        /// The keys touched, per domain (stored keys, as the store spells them).
        var touched: [DomainName: [String]]
        /// Directories a `Change` reset, for its `Notify`.
        var directories: [String] = []
        /// The tag of the `Change` that made it; `""` for a change through prefsd's own interface.
        var tag: String = ""
        /// Runs once the file holds the change, before `Notify` (the `Change`'s reply).
        var answer: (@Sendable () -> Void)?
    }

    /// What the mirror's queue and the connection's queue share, under a lock never held
    /// across I/O.
    private struct State: Sendable {
        /// The GVariant types keys were last given through dconf, per domain.
        var types: [DomainName: [String: String]] = [:]
        /// Jobs not yet taken by the queue.
        var pending: [Job] = []
        /// Whether the queue is scheduled or running.
        var draining = false
        /// Whether the scheduled drain waits for the pause after the last rewrite.
        var waiting = false
        /// When the last rewrite ended (nil: none yet).
        var lastWrite: DispatchTime?
        /// How long the last rewrite took.
        var lastWriteTook = DispatchTimeInterval.nanoseconds(0)
        /// The number of the next `Change`'s tag.
        var nextTag: UInt64 = 0
        /// The writer calls that made the newest changes, by the history's sequence number,
        /// for `Blame`.
        var calls: [UInt64: DconfBlame.Call] = [:]
        /// Whether ``start(domains:types:service:)`` ran.
        var started = false
        /// Why prefsd does not serve dconf (see ``refuse(_:)``).
        var refusal: String?
    }

    /// The files served.
    let files: DconfFiles
    private let logger: Logger
    private let queue = DispatchQueue(label: "prefsd.dconf-mirror")
    private let state = Mutex(State())
    /// The file's content, as last written; touched by the queue only (and by
    /// ``start(domains:types:service:)`` before the queue runs).
    private let mirror = Mutex(DconfMirrorDatabase())
    /// What the front asks of the service, given at ``start(domains:types:service:)``.
    private let service = Mutex<(any DconfFrontService)?>(nil)

    /// The most writer calls kept for `Blame`: more than it tells, as a call can make a
    /// change of several domains.
    static let keptCalls = 4 * DconfBlame.maximumRecords

    /// The least time between a rewrite that `took` so long and the next one made for
    /// native writes alone: twenty times as long.
    static func nativePause(after took: DispatchTimeInterval) -> DispatchTimeInterval {
        guard case .nanoseconds(let nanoseconds) = took else { return .nanoseconds(0) }
        return .nanoseconds(nanoseconds.multipliedReportingOverflow(by: 20).partialValue)
    }

    init(files: DconfFiles, logger: Logger) {
        self.files = files
        self.logger = logger
    }

    /// The GVariant type `key` of `domain` was last given through dconf, if any.
    func type(domain: DomainName, key: String) -> String? {
        state.withLock { $0.types[domain]?[key] }
    }

    /// A new tag for a `Change`, as dconf-service makes them: the connection's unique name,
    /// the database and a counter.
    func nextTag(uniqueName: String) -> String {
        let number = state.withLock { state -> UInt64 in
            defer { state.nextTag += 1 }
            return state.nextTag
        }
        return "\(uniqueName):\(files.name):\(number)"
    }

    /// Keeps `call` as the maker of the history's changes `sequences`, for `Blame`: the
    /// newest ``keptCalls``.
    func recordCall(_ call: DconfBlame.Call, sequences: [UInt64]) {
        state.withLock { state in
            for sequence in sequences { state.calls[sequence] = call }
            // The oldest go: sequence numbers only grow.
            while state.calls.count > Self.keptCalls, let oldest = state.calls.keys.min() { state.calls[oldest] = nil }
        }
    }

    /// The writer calls kept for `Blame`, by the sequence number of the change each made.
    var calls: [UInt64: DconfBlame.Call] {
        state.withLock { $0.calls }
    }

    // MARK: Starting

    /// Makes the mirror's first state: the types the store keeps, and the file made from the
    /// store's `domains`, written only when the file on disk differs (missing, damaged, or
    /// behind the store after a crash).
    func start(domains: [DomainName: [String: PropertyListValue]], types: [DomainName: [String: String]], service: any DconfFrontService) {
        self.service.withLock { $0 = service }
        state.withLock {
            $0.types = types
            $0.started = true
        }
        var database = DconfMirrorDatabase()
        for (path, value) in DconfMirror.values(of: domains, types: types) { set(path, to: value, in: &database) }
        mirror.withLock { $0 = database }
        queue.sync { write(database, reason: "start", unlessOnDisk: true) }
    }

    /// Records that prefsd does not serve dconf, and why: calls to dconf's objects are
    /// refused with the reason, and the file is left alone.
    func refuse(_ reason: String) {
        state.withLock { $0.refusal = reason }
    }

    /// Whether prefsd was refused to serve dconf at start (see ``refuse(_:)``).
    var isRefused: Bool { state.withLock { $0.refusal != nil } }

    /// Why prefsd does not serve dconf's calls now; `nil` when it does.
    var refusal: String? {
        state.withLock { state in state.refusal ?? (state.started ? nil : DconfBus.startingReason) }
    }

    // MARK: Changes

    /// Records the types a committed `Change` gave (`nil`: forgotten), before its job.
    func setTypes(_ types: [(domain: DomainName, key: String, type: String?)]) {
        state.withLock { state in
            for (domain, key, type) in types {
                state.types[domain, default: [:]][key] = type
                if state.types[domain]?.isEmpty == true { state.types[domain] = nil }
            }
        }
    }

    /// Waits until every queued job has run, the pause for native writes cut short: the
    /// file holds every committed change. Call once no more changes commit (the store is
    /// closed).
    func finish() {
        queue.sync { drain(pausing: false) }
    }

    /// Queues `job`; the queue runs it after every job queued before. While prefsd does not
    /// serve dconf (refused at start) the file is left alone, and jobs are dropped.
    func enqueue(_ job: Job) {
        let schedule = state.withLock { state -> Bool in
            guard state.refusal == nil else { return false }
            state.pending.append(job)
            // A `Change` overtakes a drain waiting for the pause (that one then finds less or nothing).
            guard !state.draining || (state.waiting && job.answer != nil) else { return false }
            state.draining = true
            state.waiting = false
            return true
        }
        if schedule { queue.async { [self] in drain() } }
    }

    /// What the queue does next.
    private enum Step {
        /// Nothing is waiting.
        case done
        /// Native writes alone are waiting, within the pause after the last rewrite.
        case wait(until: DispatchTime)
        /// These jobs, with the types at their time.
        case run([Job], [DomainName: [String: String]])
    }

    /// Runs on the queue: every waiting job, one file write for all of them; with `pausing`,
    /// jobs that answer no `Change` wait for the pause after the last rewrite.
    private func drain(pausing: Bool = true) {
        while true {
            let step = state.withLock { state -> Step in
                if state.pending.isEmpty {
                    state.draining = false
                    return .done
                }
                if pausing, let last = state.lastWrite, case let due = last + Self.nativePause(after: state.lastWriteTook),
                    DispatchTime.now() < due, !state.pending.contains(where: { $0.answer != nil })
                {
                    state.waiting = true
                    return .wait(until: due)
                }
                state.waiting = false
                defer { state.pending = [] }
                return .run(state.pending, state.types)
            }
            let jobs: [Job]
            let types: [DomainName: [String: String]]
            switch step {
            case .done:
                return
            case .wait(let due):
                queue.asyncAfter(deadline: due) { [self] in drain() }
                return
            case .run(let taken, let takenTypes):
                (jobs, types) = (taken, takenTypes)
            }
            // Jobs come only once the front has started (calls and commits wait for the store).
            guard let service = service.withLock({ $0 }) else {
                state.withLock { $0.draining = false }
                return
            }
            // What each job changed in the file, worked out in order.
            var changedPaths: [[String]] = []
            // Taken out of the mutex while it changes, so that changing it copies nothing.
            var database = mirror.withLock { mirror in
                defer { mirror = DconfMirrorDatabase() }
                return mirror
            }
            var fileChanged = false
            for job in jobs {
                var paths: [String] = []
                for (domain, keys) in job.touched {
                    let stored = service.storedValues(domain: domain, keys: keys)
                    for key in keys {
                        guard let path = DconfMirror.path(domain: domain, key: key) else { continue }
                        let new = (stored[key] ?? nil).flatMap { DconfValue(storedValue: $0, writtenAs: types[domain]?[key]) }
                        guard database.values[path] != new else { continue }
                        set(path, to: new, in: &database)
                        paths.append(path)
                    }
                }
                // A directory reset is told as the directory, as dconf-service tells it.
                let reset = job.directories.filter { directory in paths.contains { $0.hasPrefix(directory) } }
                paths.removeAll { path in reset.contains { path.hasPrefix($0) } }
                changedPaths.append(paths + reset)
                fileChanged = fileChanged || !paths.isEmpty || !reset.isEmpty
            }
            if fileChanged {
                let started = DispatchTime.now()
                write(database, reason: "change")
                let ended = DispatchTime.now()
                state.withLock { state in
                    state.lastWrite = ended
                    state.lastWriteTook = .nanoseconds(Int(clamping: ended.uptimeNanoseconds - min(started.uptimeNanoseconds, ended.uptimeNanoseconds)))
                }
            }
            mirror.withLock { $0 = database }
            for (job, paths) in zip(jobs, changedPaths) {
                job.answer?()
                if let notification = DconfNotification(paths: paths) { service.notify(notification, tag: job.tag) }
            }
        }
    }

    /// Sets `path` to `value` in `database`; a value GVDB cannot store is left out of the
    /// file, and logged.
    private func set(_ path: String, to value: DconfValue?, in database: inout DconfMirrorDatabase) {
        do {
            try database.set(path, to: value)
        } catch {
            logger.error(
                "a value cannot be stored in dconf's database file; dconf's clients do not see it",
                metadata: ["key": "\(path)", "error": "\(error)"])
        }
    }

    /// Writes the file of `database`, then flags it; with `unlessOnDisk`, only when the
    /// file on disk differs.
    private func write(_ database: DconfMirrorDatabase, reason: String, unlessOnDisk: Bool = false) {
        do {
            let bytes = try database.file()
            if unlessOnDisk, (try? files.readDatabase()) == bytes { return }
            try files.writeDatabase(bytes)
            files.invalidate()
        } catch {
            logger.error(
                "dconf's database file could not be written; dconf's clients read it as it was",
                metadata: ["file": "\(files.databasePath)", "when": "\(reason)", "error": "\(error)"])
        }
    }
}
