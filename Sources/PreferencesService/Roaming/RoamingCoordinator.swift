import Dispatch
import Foundation
import Logging
import PreferencesModel
import PreferencesRoaming
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Keeps this machine's roaming domains and the roaming folder in step, on a queue of its
/// own: publishes this machine's changes to its file, applies the other machines' later
/// changes as ordinary commits, and shows what it did in `io.github.prefsd.Roaming.Status`.
///
/// Every pass (``reconcile()``) reads the folder's changed files, takes a snapshot of the
/// roaming domains, asks the ledger for a plan and carries it out. Passes are scheduled by
/// the folder's watcher and by every committed change of a roaming domain (or of the
/// selection), coalesced, and never overlap.
final class RoamingCoordinator: Sendable {
    /// The volatile domain that shows the status.
    static let statusDomain: DomainName = {
        do { return try DomainName("io.github.prefsd.Roaming.Status") } catch { preconditionFailure("\(error)") }
    }()

    struct State: Sendable {
        var ledger: RoamingLedger
        /// What the folder's files were found to be (read, set aside).
        var reader: RoamingReader
        /// This machine's file was refused at start: it is written anew at the next pass.
        var rewriteOwn = false
        /// Other machines' changes that could not be applied, and why.
        var waiting: [RoamingKey: (machine: String, reason: String)] = [:]
        /// Why this machine's file could not be written, if it could not.
        var ownProblem: String?
        /// Problems of the selection.
        var selectionProblems: [String] = []
        /// The domains that roam, for the commit hook.
        var domains: Set<DomainName> = []
        /// Keys of roaming domains committed since the last plan (see ``RoamingLedger/plan``),
        /// with when (milliseconds: their changes are dated from then) and the number of the
        /// commit that noted them last.
        var touched: [RoamingKey: (time: UInt64, commit: UInt64)] = [:]
        /// How many commits of roaming domains were noted.
        var commitsNoted: UInt64 = 0
        /// The status last shown.
        var status: [String: PropertyListValue] = [:]
        /// When the last pass ran (for the status), in milliseconds.
        var lastPass: UInt64 = 0
    }

    let configuration: RoamingConfiguration
    let folder: RoamingFolder
    let logger: Logger
    weak let host: (any RoamingHost)?
    let queue = DispatchQueue(label: "prefsd.roaming")
    let state: Mutex<State>
    let scheduled = Mutex(false)
    let watcher = Mutex<DirectoryWatcher?>(nil)
    let hostName: String

    /// Makes a coordinator for this machine; `nil` (logged) when the machine ID cannot be read.
    init?(
        configuration: RoamingConfiguration, host: any RoamingHost, logger: Logger,
        checkValue: @escaping @Sendable (PropertyListValue, String) throws -> Void
    ) {
        guard let text = try? String(contentsOf: configuration.machineIDFile, encoding: .utf8),
            !text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty
        else {
            logger.notice("roaming is off: cannot read the machine ID", metadata: ["file": "\(configuration.machineIDFile.path)"])
            return nil
        }
        let machine = MachineID(derivedFrom: text)
        self.configuration = configuration
        folder = RoamingFolder(directory: configuration.directory)
        self.logger = logger
        self.host = host
        var name = [CChar](repeating: 0, count: 256)
        gethostname(&name, name.count - 1)
        let hostText = String(decoding: name.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        hostName = MachineName.sanitized(hostText, fallback: String(machine.rawValue.prefix(8)))
        state = Mutex(
            State(
                ledger: RoamingLedger(machine: machine, name: hostName),
                reader: RoamingReader(folder: folder, limits: configuration.limits, checkValue: checkValue)))
    }

    /// This machine's identity.
    var machine: MachineID { state.withLock { $0.ledger.machine } }

    /// The clock, in milliseconds since 1970, with the test offset.
    func now() -> UInt64 {
        var spec = timespec()
        clock_gettime(CLOCK_REALTIME, &spec)
        let milliseconds = Int64(spec.tv_sec) * 1000 + Int64(spec.tv_nsec) / 1_000_000 + configuration.clockOffsetMilliseconds
        return UInt64(max(0, milliseconds))
    }

    /// Loads this machine's file and adopted state and runs a first pass.
    func start() {
        queue.async { [self] in
            load()
            reconcile()
        }
    }

    /// Watches the folder, once roaming is in use.
    func watch() {
        watcher.withLock { watcher in
            guard watcher == nil else { return }
            watcher = DirectoryWatcher(directory: folder.directory, delay: .milliseconds(50)) { [weak self] in self?.schedule() }
        }
    }

    /// Stops watching and waits for a pass under way.
    func stop() {
        watcher.withLock {
            $0?.cancel(); $0 = nil
        }
        queue.sync {}
    }

    /// A change was committed: notes its keys and schedules a pass when its domain roams
    /// or is the selection (nothing is allocated for a domain that does not roam).
    func committed(_ change: Change) {
        let domain = change.domain
        let roams = state.withLock { state -> Bool in
            guard state.domains.contains(domain) else { return false }
            let time = now()
            state.commitsNoted += 1
            let noted = (time: time, commit: state.commitsNoted)
            for key in change.changed.keys { state.touched[RoamingKey(domain, key)] = noted }
            for key in change.removed { state.touched[RoamingKey(domain, key)] = noted }
            return true
        }
        guard roams || domain == RoamingSelection.domain else { return }
        schedule()
    }

    /// Schedules a pass (coalesced with one already scheduled).
    func schedule(after delay: DispatchTimeInterval = .milliseconds(20)) {
        guard
            scheduled.withLock({ flag in
                defer { flag = true }; return !flag
            })
        else { return }
        queue.asyncAfter(deadline: .now() + delay) { [self] in
            scheduled.withLock { $0 = false }
            reconcile()
        }
    }
}
