import Dispatch
import Foundation
import Logging
import PreferencesModel
import PreferencesRoaming
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A pass of the coordinator: the folder read, a plan asked of the ledger and carried out,
/// this machine's file written.
extension RoamingCoordinator {
    // MARK: The pass

    func load() {
        // Nothing is written before the load: what a writer left in the local tmp folder is
        // a stopped prefsd's.
        for entry in folder.removeStaleTemporaries() {
            logger.warning("left alone in the roaming folder's temporary folder: not a file prefsd writes", metadata: ["entry": "\(entry)"])
        }
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
    func scan() {
        var (ledger, reader) = state.withLock { ($0.ledger, $0.reader) }
        let events = reader.scan(into: &ledger, now: now())
        state.withLock { state in
            state.ledger = ledger
            state.reader = reader
        }
        log(events)
    }

    func log(_ events: [RoamingReader.Event]) {
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
        // The commits noted before the snapshot is taken: their values are in it.
        let notedBefore = state.withLock { $0.commitsNoted }
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
            // Taken after the snapshot: a commit the snapshot shows has been noted by then,
            // so a fresh local write is never mistaken for an old value. A key noted by a
            // commit after the snapshot began waits for the next pass (that commit scheduled
            // it): its value may be missing from the snapshot, and would be published as
            // removed.
            touched = state.touched.filter { $0.value.commit <= notedBefore }.mapValues(\.time)
            state.touched = state.touched.filter { $0.value.commit > notedBefore }
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

    struct GroupKey: Hashable { var domain: DomainName; var machine: MachineID }

    /// Commits one group and waits until it is durable (the store's completion runs on
    /// another queue), with the test hook's pauses around it.
    func apply(_ request: RoamingApplyRequest, host: any RoamingHost) -> RoamingApplyOutcome {
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
    func writeOwn(now: UInt64) {
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
}
