import PreferencesModel

/// Everything this machine knows about roaming changes, and the one decision it makes
/// from them. Pure state with no I/O: the service reads and writes the files, and calls
/// ``plan(local:selection:forced:)`` with what its store holds.
///
/// Per key, the value a machine ends with is that of the entry with the greatest
/// ``RoamingStamp`` among every machine's file (of two with one stamp, the greater value:
/// ``RoamingEntry/supersedes(_:)``). Each machine keeps, per key, the stamp its
/// value stands for (its *basis*): its own latest change of the key, or the other machine's
/// change it adopted last. A local value that differs from its basis is a change made here
/// and is published with a time later than every time seen; a remote change later than the
/// basis is applied (or merely adopted, when the value already matches).
public struct RoamingLedger: Sendable {
    /// This machine.
    public let machine: MachineID
    /// This machine's name.
    public var name: String
    /// The clock of this machine's changes.
    public private(set) var clock: HybridClock
    /// This machine's file: its changes, oldest first.
    public private(set) var log: [RoamingEntry]
    /// This machine's latest change of each key.
    public private(set) var own: [RoamingKey: RoamingEntry]
    /// The other machines' changes this machine adopted, per key.
    public private(set) var adopted: [RoamingKey: RoamingEntry]
    /// What each other machine's file says: its name and its latest change of each key,
    /// joined over every version of the file read (so a stale copy never takes a change back).
    public private(set) var remote: [MachineID: RemoteMachine] = [:]

    /// What one other machine's file says.
    public struct RemoteMachine: Sendable, Equatable {
        /// The name the file gives.
        public var name: String
        /// The latest change of each key.
        public var latest: [RoamingKey: RoamingEntry]
        /// The latest time in the file.
        public var newest: HybridTime
    }

    /// Starts from this machine's file (`own`, if any) and the adopted state.
    public init(machine: MachineID, name: String, own file: RoamingFile? = nil, adopted: RoamingFile? = nil) {
        self.machine = machine
        self.name = name
        log = file?.entries.filter { $0.stamp.machine == machine } ?? []
        own = log.winners()
        self.adopted = (adopted?.entries ?? []).filter { $0.stamp.machine != machine }.winners()
        clock = HybridClock()
        for entry in log { clock.observe(entry.stamp.time) }
        for entry in self.adopted.values { clock.observe(entry.stamp.time) }
    }

    /// Takes in another machine's file (any version, any number of times).
    public mutating func receive(_ file: RoamingFile) {
        guard file.machine != machine else { return }
        var known = remote[file.machine] ?? RemoteMachine(name: file.name, latest: [:], newest: .zero)
        known.name = file.name
        for entry in file.entries where entry.stamp.machine == file.machine {
            clock.observe(entry.stamp.time)
            known.newest = max(known.newest, entry.stamp.time)
            if let current = known.latest[entry.key], !entry.supersedes(current) { continue }
            known.latest[entry.key] = entry
        }
        remote[file.machine] = known
    }

    /// Forgets a machine whose file left the folder (what was adopted from it stays).
    public mutating func forget(_ other: MachineID) {
        remote[other] = nil
    }

    /// The latest change of `key` among the other machines' files.
    public func remoteWinner(_ key: RoamingKey) -> RoamingEntry? {
        var best: RoamingEntry?
        for machine in remote.values {
            if let entry = machine.latest[key], best.map({ entry.supersedes($0) }) ?? true { best = entry }
        }
        return best
    }

    /// The change this machine's value of `key` stands for.
    public func basis(_ key: RoamingKey) -> RoamingEntry? {
        switch (own[key], adopted[key]) {
        case (let mine?, let theirs?): mine.supersedes(theirs) ? mine : theirs
        case (let mine?, nil): mine
        case (nil, let theirs?): theirs
        case (nil, nil): nil
        }
    }

    /// What reconciling this machine's values with the folder takes.
    public struct Plan: Sendable, Equatable {
        /// Local values (or removals, `nil`) to publish as this machine's changes.
        public var publish: [RoamingKey: PropertyListValue?] = [:]
        /// Other machines' changes to apply to the store (then ``adopt(_:)``).
        public var apply: [RoamingEntry] = []
        /// Other machines' changes the store already matches: adopt them without a commit.
        public var adopt: [RoamingEntry] = []

        /// Whether there is nothing to do.
        public var isEmpty: Bool { publish.isEmpty && apply.isEmpty && adopt.isEmpty }
    }

    /// Decides what to publish and what to apply.
    ///
    /// - Parameters:
    ///   - local: the store's committed value of every key of the roaming domains.
    ///   - touched: keys changed here since the last plan (written or removed, even when the
    ///     value ended where it was): such a key is this machine's latest change of it.
    ///   - selection: what roams.
    ///   - forced: whether the administrator forces a key (it never roams either way).
    public func plan(
        local: [RoamingKey: PropertyListValue], touched: some Collection<RoamingKey> = [RoamingKey](), selection: RoamingSelection,
        forced: (RoamingKey) -> Bool
    ) -> Plan {
        let touched = Set(touched)
        var keys = Set(local.keys).union(touched)
        for key in own.keys where selection.roams(key) { keys.insert(key) }
        for key in adopted.keys where selection.roams(key) { keys.insert(key) }
        for machine in remote.values {
            for key in machine.latest.keys where selection.roams(key) { keys.insert(key) }
        }
        var plan = Plan()
        for key in keys where selection.roams(key) && !forced(key) {
            let value = local[key]
            let winner = remoteWinner(key)
            let changedHere = touched.contains(key)
            guard let basis = basis(key) else {
                // Never published nor adopted. Changed here since roaming began: this
                // machine's change (a removal too). Else a
                // machine that starts roaming a domain takes the other machines' values, and
                // adds the keys none of them has.
                if changedHere {
                    // A key made and removed between two plans is published as removed too:
                    // another machine may have set it meanwhile, earlier.
                    plan.publish[key] = .some(value)
                } else if let winner {
                    if winner.value == value { plan.adopt.append(winner) } else { plan.apply.append(winner) }
                } else if let value {
                    plan.publish[key] = .some(value)
                }
                continue
            }
            if value != basis.value {
                // Changed here since. Unless a later remote change holds exactly this value
                // (applied before a crash let its adoption be saved), publish it.
                if let winner, winner.supersedes(basis), winner.value == value {
                    plan.adopt.append(winner)
                } else {
                    plan.publish[key] = .some(value)
                }
                continue
            }
            if let winner, winner.supersedes(basis) {
                if winner.value == value {
                    plan.adopt.append(winner)
                } else if changedHere {
                    // Changed here and back (a write then its removal) since the winner's
                    // file was read: this machine's change is the later one.
                    plan.publish[key] = .some(value)
                } else {
                    plan.apply.append(winner)
                }
            }
        }
        plan.apply.sort { $0.key < $1.key }
        plan.adopt.sort { $0.key < $1.key }
        return plan
    }

    /// Records local changes as this machine's, each later than everything seen; returns
    /// the new entries.
    ///
    /// - Parameters:
    ///   - physical: the wall clock now, in milliseconds.
    ///   - changedAt: when each key was committed here, where known: its time is taken from
    ///     then (so two machines' changes order as they were made, not as they were
    ///     published), still later than everything seen.
    @discardableResult
    public mutating func publish(
        _ changes: [RoamingKey: PropertyListValue?], physical: UInt64, changedAt: [RoamingKey: UInt64] = [:]
    ) -> [RoamingEntry] {
        var added: [RoamingEntry] = []
        let ordered = changes.sorted { lhs, rhs in
            let (l, r) = (changedAt[lhs.key] ?? physical, changedAt[rhs.key] ?? physical)
            return l != r ? l < r : lhs.key < rhs.key
        }
        for (key, value) in ordered {
            let time = clock.tick(physical: min(changedAt[key] ?? physical, physical))
            let entry = RoamingEntry(key: key, value: value, stamp: RoamingStamp(time: time, machine: machine))
            log.append(entry)
            own[key] = entry
            added.append(entry)
        }
        return added
    }

    /// Records that the store holds these other machines' changes.
    public mutating func adopt(_ entries: [RoamingEntry]) {
        for entry in entries where entry.stamp.machine != machine {
            if let current = adopted[entry.key], !entry.supersedes(current) { continue }
            adopted[entry.key] = entry
            clock.observe(entry.stamp.time)
        }
    }

    /// This machine's file.
    public var file: RoamingFile { RoamingFile(kind: .changes, machine: machine, name: name, entries: log) }

    /// The adopted state, to keep outside the folder.
    public var adoptedFile: RoamingFile {
        RoamingFile(kind: .adopted, machine: machine, name: name, entries: adopted.values.sorted { $0.key < $1.key })
    }

    /// Rewrites this machine's log to its latest change per key, leaving out changes that
    /// can never win again (this machine adopted a later change of another machine) and
    /// removals older than `limits.tombstoneMilliseconds`.
    public mutating func compact(now: UInt64, limits: RoamingLimits) {
        let horizon = now > limits.tombstoneMilliseconds ? now - limits.tombstoneMilliseconds : 0
        log = own.values.filter { entry in
            if let theirs = adopted[entry.key], theirs.supersedes(entry) { return false }
            if entry.isTombstone && entry.stamp.time.wall < horizon { return false }
            return true
        }.sorted { $0.stamp < $1.stamp }
        own = log.winners()
    }

    /// Whether the log holds changes that compaction would drop.
    public var wouldCompact: Bool { log.count > own.count }
}
