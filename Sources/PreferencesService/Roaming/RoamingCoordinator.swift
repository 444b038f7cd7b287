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

    private struct State: Sendable {
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
        /// with when (milliseconds): their changes are dated from then.
        var touched: [RoamingKey: UInt64] = [:]
        /// The status last shown.
        var status: [String: PropertyListValue] = [:]
        /// When the last pass ran (for the status), in milliseconds.
        var lastPass: UInt64 = 0
    }

    let configuration: RoamingConfiguration
    let folder: RoamingFolder
    private let logger: Logger
    private weak let host: (any RoamingHost)?
    private let queue = DispatchQueue(label: "prefsd.roaming")
    private let state: Mutex<State>
    private let scheduled = Mutex(false)
    private let watcher = Mutex<DirectoryWatcher?>(nil)
    private let hostName: String

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
    private func now() -> UInt64 {
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
    private func watch() {
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
            for key in change.changed.keys { state.touched[RoamingKey(domain, key)] = time }
            for key in change.removed { state.touched[RoamingKey(domain, key)] = time }
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

    // MARK: The pass

    private func load() {
        var reader = state.withLock { $0.reader }
        let loaded = reader.load(machine: machine, name: hostName, now: now())
        state.withLock { state in
            state.ledger = loaded.ledger
            state.reader = reader
            state.rewriteOwn = loaded.rewriteOwn
        }
        log(loaded.events)
    }

    /// Reads the folder's new files into the ledger. The ledger and the reader are taken
    /// out of the state while files are read, so a commit never waits on the folder (only
    /// passes, on this queue, change them).
    private func scan() {
        var (ledger, reader) = state.withLock { ($0.ledger, $0.reader) }
        let events = reader.scan(into: &ledger, now: now())
        state.withLock { state in
            state.ledger = ledger
            state.reader = reader
        }
        log(events)
    }

    private func log(_ events: [RoamingReader.Event]) {
        for event in events {
            switch event {
            case .read(let name, let entries):
                logger.debug("read a roaming file", metadata: ["file": "\(name)", "entries": "\(entries)"])
            case .setAside(let name, let problem):
                logger.warning(
                    "a roaming file was set aside", metadata: ["file": "\(name)", "reason": "\(problem.reason)", "copy": "\(problem.copy ?? "none")"])
            case .refused(let name, let problem):
                logger.error(
                    "this machine's roaming file or adopted state was refused at start",
                    metadata: ["file": "\(name)", "reason": "\(problem.reason)", "copy": "\(problem.copy ?? "none")"])
            }
        }
    }

    /// One pass: read the folder, plan, publish, apply, write, show the status.
    func reconcile() {
        guard let host else { return }
        let snapshot = host.roamingSnapshot()
        // Until a domain roams (or did), the folder is neither watched nor read, and no
        // status is shown: a prefsd that does not roam has nothing of it.
        let active = !snapshot.selection.domains.isEmpty || state.withLock { !$0.ledger.log.isEmpty || !$0.ledger.adopted.isEmpty }
        guard active else { return }
        // The commit hook notes changes of the domains that roam from now on. A commit of a
        // domain that has just begun to roam, made before this, was not noted: the pass
        // runs again, and its snapshot shows it.
        var again = state.withLock { state in
            defer { state.domains = snapshot.selection.domains }
            return !snapshot.selection.domains.isSubset(of: state.domains)
        }
        watch()
        scan()
        let clock = now()
        var ownDirty = false
        var adoptedDirty = false
        var touched: [RoamingKey: UInt64] = [:]
        let plan = state.withLock { state -> RoamingLedger.Plan in
            state.selectionProblems = snapshot.problems
            if let name = snapshot.selection.machineName, name != state.ledger.name {
                state.ledger.name = name
                ownDirty = !state.ledger.log.isEmpty
            }
            // Taken after the snapshot: a commit the snapshot shows has (almost always) been
            // noted by then, so a fresh local write is never mistaken for an old value.
            touched = state.touched
            state.touched = [:]
            return state.ledger.plan(local: snapshot.local, touched: touched.keys, selection: snapshot.selection) { snapshot.forced.contains($0) }
        }
        if !plan.publish.isEmpty {
            state.withLock { _ = $0.ledger.publish(plan.publish, physical: clock, changedAt: touched) }
            ownDirty = true
            logger.debug("publishing roaming changes", metadata: ["keys": "\(plan.publish.count)"])
        }
        if !plan.adopt.isEmpty {
            state.withLock { $0.ledger.adopt(plan.adopt) }
            adoptedDirty = true
        }
        if !plan.apply.isEmpty {
            let names = state.withLock { state in state.ledger.remote.mapValues(\.name) }
            let groups = Dictionary(grouping: plan.apply) { GroupKey(domain: $0.key.domain, machine: $0.stamp.machine) }
            for (group, entries) in groups.sorted(by: { ($0.key.domain, $0.key.machine) < ($1.key.domain, $1.key.machine) }) {
                let name = names[group.machine] ?? String(group.machine.rawValue.prefix(8))
                var request = RoamingApplyRequest(domain: group.domain, expected: [:], absent: [], set: [:], remove: [], who: "roaming:\(name)")
                for entry in entries {
                    if let current = snapshot.local[entry.key] { request.expected[entry.key.key] = current } else { request.absent.append(entry.key.key) }
                    if let value = entry.value { request.set[entry.key.key] = value } else { request.remove.append(entry.key.key) }
                }
                switch apply(request, host: host) {
                case .applied:
                    state.withLock { state in
                        state.ledger.adopt(entries)
                        for entry in entries { state.waiting[entry.key] = nil }
                    }
                    adoptedDirty = true
                case .declined:
                    again = true
                case .failed(let reason):
                    logger.warning(
                        "changes of another machine could not be applied", metadata: ["domain": "\(group.domain)", "machine": "\(name)", "reason": "\(reason)"])
                    state.withLock { state in
                        for entry in entries { state.waiting[entry.key] = (name, reason) }
                    }
                }
            }
        }
        if ownDirty || state.withLock({ $0.rewriteOwn }) { writeOwn(now: clock) }
        if adoptedDirty {
            let bytes = state.withLock { $0.ledger.adoptedFile.encoded() }
            do { try folder.writeLocal(bytes, name: folder.adoptedURL.lastPathComponent) } catch {
                logger.error("the adopted roaming state could not be saved", metadata: ["error": "\(error)"])
            }
        }
        state.withLock { state in
            state.lastPass = clock
            state.waiting = state.waiting.filter { snapshot.selection.roams($0.key) }
        }
        showStatus(host: host, selection: snapshot.selection)
        if again { schedule(after: .milliseconds(50)) }
    }

    private struct GroupKey: Hashable { var domain: DomainName; var machine: MachineID }

    /// Commits one group and waits until it is durable (the store's completion runs on
    /// another queue), with the test hook's pauses around it.
    private func apply(_ request: RoamingApplyRequest, host: any RoamingHost) -> RoamingApplyOutcome {
        if configuration.applyDelayMilliseconds > 0 { usleep(UInt32(configuration.applyDelayMilliseconds) * 1000) }
        let outcome = Mutex<RoamingApplyOutcome?>(nil)
        let done = DispatchSemaphore(value: 0)
        host.applyRoaming(request) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        if done.wait(timeout: .now() + 120) == .timedOut {
            return .failed("the store did not answer within 120 s; tried again at the next change")
        }
        if configuration.applyDelayMilliseconds > 0 { usleep(UInt32(configuration.applyDelayMilliseconds) * 1000) }
        return outcome.withLock { $0 } ?? .failed("no answer from the store")
    }

    /// Compacts this machine's log when it is worth it and writes the file whole.
    private func writeOwn(now: UInt64) {
        let limits = configuration.limits
        let bytes = state.withLock { state -> [UInt8] in
            if state.ledger.log.count > 2 * state.ledger.own.count + 64 { state.ledger.compact(now: now, limits: limits) }
            var bytes = state.ledger.file.encoded()
            if bytes.count > limits.fileBytes / 2 {
                state.ledger.compact(now: now, limits: limits)
                bytes = state.ledger.file.encoded()
            }
            return bytes
        }
        guard bytes.count <= limits.fileBytes else {
            let problem =
                "this machine's roaming file would take \(bytes.count) bytes, over the \(limits.fileBytes) allowed (prefsd --max-roaming-file-size): roam fewer or smaller keys"
            logger.error("\(problem)")
            state.withLock { $0.ownProblem = problem }
            return
        }
        do {
            try folder.writeOwn(bytes, machine: machine)
            state.withLock { state in
                state.ownProblem = nil
                state.rewriteOwn = false
            }
        } catch {
            logger.error("this machine's roaming file could not be written", metadata: ["error": "\(error)"])
            state.withLock { $0.ownProblem = error.description }
        }
    }

    // MARK: Status

    private func showStatus(host: any RoamingHost, selection: RoamingSelection) {
        let values = state.withLock { state -> [String: PropertyListValue]? in
            var values: [String: PropertyListValue] = [
                "Machine": .string(state.ledger.machine.rawValue),
                "MachineName": .string(state.ledger.name),
                "Folder": .string(folder.directory.path),
                "Domains": .array(selection.domains.sorted().map { .string($0.rawValue) }),
                "Published": .integer(Int64(state.ledger.log.count)),
            ]
            values["Machines"] = .array(
                state.ledger.remote.sorted { $0.key < $1.key }.map { machine, known in
                    .dictionary([
                        "Machine": .string(machine.rawValue), "Name": .string(known.name),
                        "LastChange": .date(secondsSince1970: Double(known.newest.wall) / 1000),
                        "Keys": .integer(Int64(known.latest.count)),
                    ])
                })
            values["Waiting"] = .array(
                state.waiting.sorted { $0.key < $1.key }.map { key, problem in
                    .dictionary([
                        "Domain": .string(key.domain.rawValue), "Key": .string(key.key),
                        "Machine": .string(problem.machine), "Reason": .string(problem.reason),
                    ])
                })
            // This machine's own files refused at start first, then the other machines'.
            values["SetAside"] = .array(
                (state.reader.refused.sorted { $0.key < $1.key } + state.reader.setAside.sorted { $0.key < $1.key }).map { name, problem in
                    var entry: [String: PropertyListValue] = ["File": .string(name.text), "Reason": .string(problem.reason)]
                    if let copy = problem.copy { entry["Copy"] = .string(copy) }
                    return .dictionary(entry)
                })
            var problems = state.selectionProblems
            if let own = state.ownProblem { problems.append(own) }
            values["Problems"] = .array(problems.map { .string($0) })
            guard values != state.status else { return nil }
            state.status = values
            return values
        }
        if let values { host.showRoamingStatus(values) }
    }
}
