import Dconf
import Dispatch
import Foundation
import Logging
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// What ``DconfFront`` asks of the service it serves for.
protocol DconfFrontService: AnyObject, Sendable {
    /// The committed values of `keys` of `domain` (`nil`: not stored).
    func storedValues(domain: DomainName, keys: [String]) -> [String: PropertyListValue?]
    /// Emits dconf's `Notify` with `tag`.
    func notify(_ notification: DconfNotification, tag: String)
    /// The mark of the store that dconf's file carries (``DconfMirror/Mark``).
    var dconfMark: DconfMirror.Mark { get }
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
/// A `Change` writes the file aside before the store commits it (``prepare(_:)``): when the
/// file cannot be written, the `Change` is refused and nothing changes. Its job renames the
/// file aside in once the store has committed (writing it again first when changes taken
/// meanwhile make it differ). When the file cannot be written for changes already
/// committed (prefsd's own interface, or a `Change` whose file aside had to be written
/// again and could not), their jobs wait, unanswered and untold, and the file is tried
/// again with the next job and every ``retryInterval`` until it holds them; the failure is
/// logged once per spell. An `Init` is refused meanwhile.
///
/// Jobs that answer no `Change` (native writes) do not rewrite the file sooner than
/// ``nativePause(after:)`` after the last rewrite, twenty times what that rewrite took:
/// the queue spends at most about a twentieth of its time rewriting the file for a stream
/// of native writes, not a rewrite per write, and their `Notify` comes up to that much
/// later (about a millisecond for a small database, some 40 ms at 10,000 keys). A lone
/// native write after a quiet spell, and a `Change`, are never held back.
///
/// The file leaves out what prefsd keeps from sandboxed applications (``keepsOut(_:)``).
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
        /// The file written aside for the `Change` that made it (see ``DconfFront/prepare(_:)``).
        var aside: DconfAside?
        /// Runs instead of `answer`, with the reason, when the file cannot be written: for
        /// a call that changes nothing (`Init`), which is refused rather than kept waiting.
        var refuse: (@Sendable (String) -> Void)?
    }

    /// What the mirror's queue and the connection's queue share, under a lock never held
    /// across I/O.
    struct State: Sendable {
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

    /// What only the mirror's queue touches (and ``start(domains:types:service:)`` before
    /// the queue runs).
    struct Mirror: Sendable {
        /// The file's content: every change the queue has taken.
        var database = DconfMirrorDatabase()
        /// Whether the file on disk is behind ``database``: its last write failed.
        var behind = false
        /// Jobs taken into ``database`` while the file is behind, with the dconf keys each
        /// changed: answered and told (`Notify`) once the file holds them, in order.
        var held: [(job: Job, paths: [String])] = []
        /// Why the file cannot be written, during a spell of failures (logged once, when
        /// the spell starts).
        var failure: String?
        /// Whether a retry is scheduled.
        var retrying = false
        /// The last refusal of the invalidation file (logged once until it changes).
        var invalidationRefusal: String?
    }

    /// The files served.
    let files: DconfFiles
    let logger: Logger
    let queue = DispatchQueue(label: "prefsd.dconf-mirror")
    let state = Mutex(State())
    /// Touched by the queue only (and by ``start(domains:types:service:)`` before the queue runs).
    let mirror = Mutex(Mirror())
    /// What the front asks of the service, given at ``start(domains:types:service:)``.
    let service = Mutex<(any DconfFrontService)?>(nil)
    /// The sandboxed applications whose domains the file leaves out.
    let applications: SandboxedApplications

    /// The most writer calls kept for `Blame`: more than it tells, as a call can make a
    /// change of several domains.
    static let keptCalls = 4 * DconfBlame.maximumRecords

    /// How long after a failed write the file is tried again, while no change comes.
    static let retryInterval = DispatchTimeInterval.seconds(1)

    /// The least time between a rewrite that `took` so long and the next one made for
    /// native writes alone: twenty times as long.
    static func nativePause(after took: DispatchTimeInterval) -> DispatchTimeInterval {
        guard case .nanoseconds(let nanoseconds) = took else { return .nanoseconds(0) }
        return .nanoseconds(nanoseconds.multipliedReportingOverflow(by: 20).partialValue)
    }

    init(files: DconfFiles, applications: SandboxedApplications, logger: Logger) {
        self.files = files
        self.applications = applications
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

    // MARK: What the file leaves out

    /// Whether dconf's file leaves `domain` out: what prefsd keeps from sandboxed
    /// applications, which any application allowed to read dconf's file would otherwise
    /// read. That is the domains of every sandboxed application prefsd has served (its
    /// application ID and suites) and the reserved domains, xfconf's channels (`xfconf.`)
    /// among them.
    func keepsOut(_ domain: DomainName) -> Bool {
        ReservedDomains.contains(domain.rawValue) || applications.owns(domain)
    }

    /// Takes the keys of a sandboxed application's domains out of the file, once prefsd
    /// has first served the application: `touched`, its stored keys.
    func keepOut(_ touched: [DomainName: [String]]) {
        guard !touched.isEmpty else { return }
        enqueue(Job(touched: touched))
    }

    // MARK: Starting

    /// Makes the mirror's first state: the types the store keeps, and the file made from the
    /// store's `domains`, written only when the file on disk differs (missing, damaged, or
    /// behind the store after a crash). Files a prefsd that stopped midway left aside are
    /// removed first.
    func start(domains: [DomainName: [String: PropertyListValue]], types: [DomainName: [String: String]], service: any DconfFrontService) {
        self.service.withLock { $0 = service }
        state.withLock {
            $0.types = types
            $0.started = true
        }
        var current = Mirror(database: DconfMirrorDatabase(mark: service.dconfMark))
        let shown = domains.filter { !keepsOut($0.key) }
        for (path, value) in DconfMirror.values(of: shown, types: types) { set(path, to: value, in: &current.database) }
        queue.sync {
            for entry in files.removeStaleAsides() {
                logger.warning("left alone beside dconf's database: not a file prefsd writes", metadata: ["file": "\(entry)"])
            }
            write(&current, through: nil, reason: "start", unlessOnDisk: true)
            mirror.withLock { $0 = current }
        }
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

    /// Writes dconf's file aside as it will be once a `Change` setting the dconf keys
    /// `values` (`nil`: reset) is committed, after every change committed before: its job
    /// renames it in. Call before the `Change` is staged; ``discard(_:)`` it when the
    /// `Change` is not committed. `nil` when the `Change` leaves the file as it is.
    /// - Throws: ``DconfError`` naming the file when it cannot be written: refuse the `Change`.
    func prepare(_ values: [String: DconfValue?]) throws(DconfError) -> DconfAside? {
        let result = queue.sync { () -> Result<DconfAside?, DconfError> in
            // The jobs committed so far go into the file first (a `Change` never waits for
            // the pause of native writes).
            drain(pausing: false)
            return Result { () throws(DconfError) -> DconfAside? in try writeAside(values) }
        }
        return try result.get()
    }

    /// Drops a file written aside for a `Change` that was not committed.
    func discard(_ aside: DconfAside?) {
        if let aside { DconfFiles.discard(aside) }
    }

    /// Waits until every queued job has run, the pause for native writes cut short: the
    /// file holds every committed change, unless it cannot be written (logged). Call once
    /// no more changes commit (the store is closed).
    func finish() {
        queue.sync {
            drain(pausing: false)
            catchUp()
            if mirror.withLock({ $0.behind }) {
                logger.error(
                    "prefsd stops with dconf's database file behind its store: it could not be written; the next start writes it from the store",
                    metadata: ["file": "\(files.databasePath)"])
            }
        }
    }

    /// Queues `job`; the queue runs it after every job queued before. While prefsd does not
    /// serve dconf (refused at start) the file is left alone, and jobs are dropped.
    func enqueue(_ job: Job) {
        enum Admission { case dropped, queued, scheduled }
        let admission = state.withLock { state -> Admission in
            guard state.refusal == nil else { return .dropped }
            state.pending.append(job)
            // A `Change` overtakes a drain waiting for the pause (that one then finds less or nothing).
            guard !state.draining || (state.waiting && job.answer != nil) else { return .queued }
            state.draining = true
            state.waiting = false
            return .scheduled
        }
        switch admission {
        case .dropped: discard(job.aside)
        case .queued: break
        case .scheduled: queue.async { [self] in drain() }
        }
    }
}
