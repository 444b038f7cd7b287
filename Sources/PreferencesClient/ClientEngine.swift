#if canImport(PreferencesInterface)
    import PreferencesInterface  // in the GIO module, the same sources are part of the module
#endif

/// The client engine: the one cache of prefsd's domains a client keeps true by prefsd's
/// signals, in the role of dconf's engine. A plain state machine, written in the Embedded
/// Swift subset (no Foundation, no Dispatch, no existentials, no reflection) so that the
/// same source builds into the `Preferences` library and into the GIO module: the adapter
/// feeds it events (what it wants, what prefsd answered or signalled) and sends what it
/// asks for (``ClientAction``, drained with ``takeActions()``). It does no I/O, starts no
/// thread and takes no lock: an adapter calls it from one thread at a time.
///
/// **Loading.** The first read of a domain asks for ``ClientAction/subscribe(_:)`` and
/// ``ClientAction/load(_:token:)`` together: one round trip. Until the answer, the domain
/// is ``ClientDomainPhase/loading`` and reads find nothing.
///
/// **One ordering rule.** Each value the cache holds is stamped with the serial of
/// prefsd's message that told it (a signal, a load's answer, a write's answer); a message
/// never overwrites what a newer message of the same prefsd told. An adapter that feeds
/// messages in the order they arrived (one connection: the order prefsd sent them) meets
/// the rule trivially; one that cannot (answers and signals on different threads) still
/// converges. Messages from a connection that is not prefsd's current owner are ignored.
///
/// **Owner changes.** A load answered by a prefsd that is no longer the owner is loaded
/// again; a load sent while no owner was known (the bus is starting prefsd for it) is
/// answered by the prefsd the bus started, and is not sent again when its name appears.
///
/// **Writes.** A write is laid over the cache at once (readers see it) and queued on the
/// domain's lane: one call in flight per domain, and the writes made meanwhile merged into
/// the next (the last value of a key wins), so a burst costs two calls, not one per key.
/// When prefsd answers, the values are confirmed (or, refused, dropped: readers see
/// prefsd's values again).
public struct ClientEngine<Value: Equatable & Sendable>: Sendable {
    private var domains: [ClientDomain: DomainRecord<Value>] = [:]
    private var actions: [ClientAction<Value>] = []
    private var lastToken: UInt64 = 0
    private var lastGeneration: UInt64 = 0
    private var lastTicket: UInt64 = 0
    /// The unique name of prefsd's connection, once known (from a name-owner change or
    /// the sender of an answer).
    public private(set) var owner: String?

    /// An engine following no domain.
    public init() {}

    /// The actions asked for since the last call, oldest first.
    public mutating func takeActions() -> [ClientAction<Value>] {
        guard !actions.isEmpty else { return [] }
        defer { actions.removeAll(keepingCapacity: true) }
        return actions
    }

    // MARK: Reading

    /// Where the domain's load stands.
    public func phase(of domain: ClientDomain) -> ClientDomainPhase {
        domains[domain]?.phase ?? .unknown
    }

    /// The value readers see for `key`: this process's pending writes over prefsd's
    /// values; `nil` when unset or the domain is not loaded. Allocates nothing.
    public func value(_ key: String, in domain: ClientDomain) -> Value? {
        guard let record = domains[domain], record.everLoaded else { return nil }
        return record.effective(key)
    }

    /// The value prefsd holds for `key`, without this process's pending writes.
    public func confirmedValue(_ key: String, in domain: ClientDomain) -> Value? {
        domains[domain]?.confirmed[key]?.value ?? nil
    }

    /// Whether an administrator forces `key` (so a write of it is refused).
    public func isForced(_ key: String, in domain: ClientDomain) -> Bool {
        domains[domain]?.forced.contains(key) ?? false
    }

    /// The keys an administrator forces in the domain.
    public func forcedKeys(in domain: ClientDomain) -> Set<String> {
        domains[domain]?.forced ?? []
    }

    /// Every key of the domain with the value readers see.
    public func entries(of domain: ClientDomain) -> [String: Value] {
        guard let record = domains[domain], record.everLoaded else { return [:] }
        var entries: [String: Value] = [:]
        for key in record.knownKeys {
            if let value = record.effective(key) { entries[key] = value }
        }
        return entries
    }

    /// The domains followed.
    public var followedDomains: [ClientDomain] { Array(domains.keys) }

    /// Whether a load of `domain` (its first, or a reload) is on its way, or of any domain.
    public func isLoading(_ domain: ClientDomain? = nil) -> Bool {
        if let domain { return domains[domain]?.loadToken != nil }
        return domains.values.contains { $0.loadToken != nil }
    }

    /// Whether a write of this process is queued or in flight (in `domain`, or in any).
    public func hasPendingWrites(in domain: ClientDomain? = nil) -> Bool {
        if let domain { return domains[domain]?.hasWrites ?? false }
        return domains.values.contains { $0.hasWrites }
    }

    // MARK: Following domains

    /// Follows `domain`: the first time, asks for its subscription and its load. Returns
    /// the phase after the call.
    @discardableResult
    public mutating func follow(_ domain: ClientDomain) -> ClientDomainPhase {
        if let record = domains[domain] { return record.phase }
        domains[domain] = DomainRecord()
        actions.append(.subscribe(domain))
        sendLoad(domain)
        return .loading
    }

    /// Stops following `domain` (its values are forgotten). Refused (`false`) while
    /// writes of it are queued or in flight.
    public mutating func forget(_ domain: ClientDomain) -> Bool {
        guard let record = domains[domain] else { return true }
        guard !record.hasWrites else { return false }
        domains[domain] = nil
        actions.append(.unsubscribe(domain))
        return true
    }

    /// Loads `domain` again (prefsd said to, or the adapter lost signals), unless a load
    /// of it is on its way.
    public mutating func reload(_ domain: ClientDomain) {
        guard let record = domains[domain], record.loadToken == nil else { return }
        sendLoad(domain)
    }

    /// Loads every followed domain again.
    public mutating func reloadAll() {
        for domain in Array(domains.keys) { reload(domain) }
    }

    private mutating func sendLoad(_ domain: ClientDomain) {
        lastToken += 1
        domains[domain]?.loadToken = lastToken
        domains[domain]?.loadOwner = owner
        domains[domain]?.loadAnswers = LoadAnswers()
        domains[domain]?.invalidatedSerial = 0
        actions.append(.load(domain, token: lastToken))
    }

    /// Whether a message from `sender` speaks for prefsd (`nil`: the adapter vouches for it).
    private func accepts(_ sender: String?) -> Bool {
        guard let sender else { return true }
        if owner == nil { return false }
        return sender == owner
    }

    /// prefsd answered the load `token` of `domain`: its values, its forced keys (empty
    /// for a volatile domain), the serial of the answer (0 when the domain does not
    /// exist: every signal is newer), the serial of the forced keys' answer when they came
    /// in a call of their own (`ForcedKeys`; `nil`: `serial`), and the answer's sender
    /// (`nil` when the adapter vouches for it). A domain that does not exist is answered
    /// with no values.
    public mutating func loadAnswered(
        _ domain: ClientDomain, token: UInt64, values: [String: Value], forced: Set<String>,
        serial: UInt32, forcedSerial: UInt32? = nil, sender: String?
    ) {
        guard var record = domains[domain], record.loadToken == token else { return }
        record.loadToken = nil
        if let sender {
            if owner == nil { owner = sender }
            // Answered by a prefsd that is no longer the owner: not what prefsd holds now.
            if sender != owner {
                domains[domain] = record
                sendLoad(domain)
                return
            }
        }
        let stale = serial < record.invalidatedSerial
        let first = !record.everLoaded
        let keys = record.knownKeys.union(values.keys)
        var before: [Value?] = []
        if !first { before = keys.map { record.effective($0) } }
        record.recordSnapshot(values, serial: serial)
        let forcing = record.recordForced(forced, serial: forcedSerial ?? serial)
        record.everLoaded = true
        record.failed = false
        record.loadedFrom = sender ?? owner
        domains[domain] = record
        if first {
            actions.append(.loadFinished(domain, loaded: true))
        } else {
            reportChanges(domain, keys: Array(keys), before: before)
            if !forcing.isEmpty { actions.append(.forcedChanged(domain, keys: forcing.sorted())) }
        }
        if stale { sendLoad(domain) }
    }

    /// The load `token` of `domain` failed (prefsd could not be reached, or refused).
    /// A domain loaded before keeps its values; a first load ends ``ClientDomainPhase/unavailable``.
    public mutating func loadFailed(_ domain: ClientDomain, token: UInt64, reason: String) {
        guard var record = domains[domain], record.loadToken == token else { return }
        record.loadToken = nil
        // Sent to a prefsd that has gone since: ask the one that owns the name now.
        if let owner, let sentTo = record.loadOwner, sentTo != owner {
            domains[domain] = record
            sendLoad(domain)
            return
        }
        let first = !record.everLoaded
        if first { record.failed = true }
        domains[domain] = record
        if first { actions.append(.loadFinished(domain, loaded: false)) }
    }

    /// prefsd answered the `ReadDomain` (`ReadVolatileDomain` for a volatile domain) of
    /// the load `token`: the domain's values, the answer's serial and sender (`nil`: the
    /// adapter vouches for it). A volatile domain's load is complete; a persistent
    /// domain's once its `ForcedKeys` is answered too, in either order.
    public mutating func domainRead(_ domain: ClientDomain, token: UInt64, values: [String: Value], serial: UInt32, sender: String?) {
        guard var record = domains[domain], record.loadToken == token, record.loadAnswers.values == nil else { return }
        record.loadAnswers.values = (values, serial, sender)
        record.loadAnswers.answered += 1
        domains[domain] = record
        loadPartAnswered(domain, token: token)
    }

    /// prefsd answered the `ForcedKeys` of the load `token` of a persistent domain.
    public mutating func forcedKeysRead(_ domain: ClientDomain, token: UInt64, keys: Set<String>, serial: UInt32) {
        guard var record = domains[domain], record.loadToken == token, record.loadAnswers.forced == nil else { return }
        record.loadAnswers.forced = (keys, serial)
        record.loadAnswers.answered += 1
        domains[domain] = record
        loadPartAnswered(domain, token: token)
    }

    /// The call `part` of the load `token` failed: `failure` is what its error answer
    /// meant (`nil`: no answer came, or it named nothing the protocol knows), `reason` what
    /// a person reads, `sender` who answered (`nil`: the adapter vouches for it, or none
    /// did). A domain or its forced keys not found is no failure: the domain has no keys
    /// (and every signal is newer than such an answer).
    public mutating func loadCallFailed(
        _ domain: ClientDomain, token: UInt64, part: ClientLoadPart, failure: PreferencesFailure?, reason: String,
        sender: String? = nil
    ) {
        guard var record = domains[domain], record.loadToken == token else { return }
        switch part {
        case .values:
            guard record.loadAnswers.values == nil else { return }
            if failure?.isNotFound == true { record.loadAnswers.values = ([:], 0, sender) }
        case .forcedKeys:
            guard record.loadAnswers.forced == nil else { return }
            if failure?.isNotFound == true { record.loadAnswers.forced = ([], nil) }
        }
        if failure?.isNotFound != true, record.loadAnswers.failure == nil { record.loadAnswers.failure = reason }
        record.loadAnswers.answered += 1
        domains[domain] = record
        loadPartAnswered(domain, token: token)
    }

    /// Ends the load `token` once each of its calls is answered.
    private mutating func loadPartAnswered(_ domain: ClientDomain, token: UInt64) {
        guard let answers = domains[domain]?.loadAnswers, answers.answered == (domain.isVolatile ? 1 : 2) else { return }
        if let failure = answers.failure {
            loadFailed(domain, token: token, reason: failure)
        } else if let values = answers.values {
            let forced = answers.forced ?? ([], nil)
            loadAnswered(
                domain, token: token, values: values.values, forced: forced.keys, serial: values.serial,
                forcedSerial: forced.serial, sender: values.sender)
        }
    }

    // MARK: prefsd's signals

    /// prefsd's name changed owner (`nil`: no one owns it). Serials start again; a domain
    /// loaded from another owner is loaded again; a load sent while no owner was known is
    /// left to be answered by the new one.
    public mutating func ownerChanged(to newOwner: String?) {
        guard newOwner != owner else { return }
        owner = newOwner
        for domain in Array(domains.keys) {
            domains[domain]?.resetSerials()
            guard let newOwner, let record = domains[domain] else { continue }
            if record.loadToken != nil {
                // Sent to a prefsd that is gone: its answer (or failure) comes from it,
                // and the sender check loads again then. Sent while no owner was known:
                // the bus queued it for the prefsd it started, which is this one.
                continue
            }
            if record.loadedFrom != newOwner { sendLoad(domain) }
        }
    }

    /// A `Changed` (or `VolatileChanged`) signal about `domain`, with its serial and
    /// sender. Keys it `invalidated` (left out of the signal) are read again by loading
    /// the domain.
    public mutating func changed(
        _ domain: ClientDomain, changed: [String: Value], removed: [String], invalidated: [String] = [],
        serial: UInt32, sender: String?
    ) {
        guard accepts(sender), var record = domains[domain] else { return }
        var keys = Array(changed.keys)
        keys.append(contentsOf: removed)
        let visible = record.everLoaded
        var before: [Value?] = []
        if visible { before = keys.map { record.effective($0) } }
        for (key, value) in changed { record.record(key, value, serial: serial) }
        for key in removed { record.record(key, nil, serial: serial) }
        let invalid = !invalidated.isEmpty
        if invalid && record.loadToken != nil { record.invalidatedSerial = max(record.invalidatedSerial, serial &+ 1) }
        domains[domain] = record
        if visible { reportChanges(domain, keys: keys, before: before) }
        if invalid && record.loadToken == nil { sendLoad(domain) }
    }

    /// A `ForcedKeysChanged` signal: the keys an administrator now forces in `domain`.
    public mutating func forcedKeysChanged(_ domain: ClientDomain, keys: Set<String>, serial: UInt32, sender: String?) {
        guard accepts(sender), var record = domains[domain] else { return }
        let changed = record.recordForced(keys, serial: serial)
        domains[domain] = record
        if record.everLoaded && !changed.isEmpty { actions.append(.forcedChanged(domain, keys: changed.sorted())) }
    }

    // MARK: Writing

    /// Writes (a value) or removes (`nil`) keys of a persistent domain, laid over the
    /// cache at once and queued on the domain's lane. Refused (`false`, nothing changed)
    /// when the domain is volatile (replace it whole) or not loaded, or a key is forced.
    public mutating func write(_ changes: [(key: String, value: Value?)], in domain: ClientDomain) -> Bool {
        submit(changes, in: domain) != nil
    }

    /// ``write(_:in:)``, returning the write's ticket (`nil`: refused, nothing changed):
    /// its outcome is told by ``ClientAction/writeEnded(_:tickets:failure:)`` quoting it,
    /// once the call that carried it (merged with the writes made meanwhile) is answered.
    /// A write of no key is accepted and told ended at once.
    public mutating func submit(_ changes: [(key: String, value: Value?)], in domain: ClientDomain) -> UInt64? {
        guard !domain.isVolatile, var record = domains[domain], record.everLoaded else { return nil }
        for change in changes where record.forced.contains(change.key) { return nil }
        lastTicket += 1
        let ticket = lastTicket
        guard !changes.isEmpty else {
            actions.append(.writeEnded(domain, tickets: [ticket], failure: nil))
            return ticket
        }
        var writes: [String: LocalWrite<Value>] = [:]
        for change in changes {
            lastGeneration += 1
            let write = LocalWrite(value: change.value, generation: lastGeneration, tickets: [ticket])
            writes[change.key] = write
            record.local[change.key] = write
            if record.replaced != nil { record.replaced?.values[change.key] = change.value }
        }
        let flush = record.enqueue(writes)
        domains[domain] = record
        actions.append(.changed(domain, keys: changes.map { $0.key }, byWrite: true))
        if flush { actions.append(.flushNeeded(domain)) }
        return ticket
    }

    /// Replaces the whole domain with `values` (`nil`: removes it), laid over the cache
    /// at once and queued behind the domain's earlier writes. Refused (`false`) when the
    /// domain is not loaded or (persistent) has forced keys.
    public mutating func replace(_ domain: ClientDomain, with values: [String: Value]?) -> Bool {
        submitReplace(domain, with: values) != nil
    }

    /// ``replace(_:with:)``, returning the replacement's ticket (`nil`: refused, nothing
    /// changed): its outcome is told by ``ClientAction/writeEnded(_:tickets:failure:)``
    /// quoting it, once prefsd answered the call.
    public mutating func submitReplace(_ domain: ClientDomain, with values: [String: Value]?) -> UInt64? {
        guard var record = domains[domain], record.everLoaded, record.forced.isEmpty else { return nil }
        lastTicket += 1
        let ticket = lastTicket
        let keys = Array(record.knownKeys.union(values.map { Set($0.keys) } ?? []))
        let before = keys.map { record.effective($0) }
        lastGeneration += 1
        record.replaced = (values ?? [:], lastGeneration)
        record.local = [:]
        let wasIdle = record.queue.isEmpty && record.inFlight == nil
        record.queue.append(.replace(values, generation: lastGeneration, ticket: ticket))
        domains[domain] = record
        reportChanges(domain, keys: keys, before: before)
        if wasIdle { actions.append(.flushNeeded(domain)) }
        return ticket
    }

    /// Sends the domain's next queued call (``ClientAction/apply(_:set:remove:token:)`` or
    /// ``ClientAction/replace(_:values:token:)``), unless one is in flight.
    public mutating func flush(_ domain: ClientDomain) {
        guard var record = domains[domain], record.inFlight == nil, !record.queue.isEmpty else { return }
        let operation = record.queue.removeFirst()
        lastToken += 1
        record.inFlight = (operation, lastToken)
        record.inFlightFloor = record.newestSerial
        domains[domain] = record
        switch operation {
        case .keys(let batch, _):
            var set: [String: Value] = [:]
            var remove: [String] = []
            for (key, write) in batch {
                if let value = write.value { set[key] = value } else { remove.append(key) }
            }
            actions.append(.apply(domain, set: set, remove: remove.sorted(), token: lastToken))
        case .replace(let values, _, _):
            actions.append(.replace(domain, values: values, token: lastToken))
        }
    }

    /// Sends the next call of every lane that has one queued and none in flight.
    public mutating func flushAll() {
        for domain in Array(domains.keys) { flush(domain) }
    }

    /// prefsd made the write `token` durable; `serial` and `sender` are its answer's.
    public mutating func writeAnswered(_ domain: ClientDomain, token: UInt64, serial: UInt32, sender: String?) {
        guard var record = domains[domain], let (operation, sent) = record.inFlight, sent == token else { return }
        record.inFlight = nil
        let trusted = accepts(sender)
        let keys: [String]
        switch operation {
        case .keys(let batch, _):
            keys = Array(batch.keys)
            let before = keys.map { record.effective($0) }
            for (key, write) in batch {
                // A removal may reveal a value prefsd keeps under the user's (an
                // administrator's default), which its `Changed` for this commit carries: that
                // signal, sent before this answer, wins over the removal whichever comes first.
                // So a removal is recorded as of the call's sending, not of its answer.
                if trusted { record.record(key, write.value, serial: write.value == nil ? record.inFlightFloor : serial) }
                if record.local[key]?.generation == write.generation { record.local[key] = nil }
            }
            domains[domain] = record
            reportChanges(domain, keys: keys, before: before)
            actions.append(.writeEnded(domain, tickets: Self.tickets(of: batch), failure: nil))
        case .replace(let values, let generation, let ticket):
            keys = Array(record.knownKeys.union(values.map { Set($0.keys) } ?? []))
            let before = keys.map { record.effective($0) }
            if trusted { record.recordSnapshot(values ?? [:], serial: serial) }
            if record.replaced?.generation == generation { record.replaced = nil }
            domains[domain] = record
            reportChanges(domain, keys: keys, before: before)
            actions.append(.writeEnded(domain, tickets: [ticket], failure: nil))
        }
        laneMoved(domain)
    }

    /// The write `token` failed: `failure` is what its error answer meant (`nil`: no
    /// answer came, or it named nothing the protocol knows), `reason` what a person reads.
    /// Its keys read as prefsd holds them again (unless written since). When the refusal
    /// concerns one key of several (`PreferencesFailure.concernsOneKey`: a name or value
    /// prefsd does not take, a forced key, a limit), each key is sent again by itself, so
    /// the others are still stored; this is the one retry policy of every client.
    public mutating func writeFailed(_ domain: ClientDomain, token: UInt64, failure: PreferencesFailure?, reason: String) {
        guard var record = domains[domain], let (operation, sent) = record.inFlight, sent == token else { return }
        record.inFlight = nil
        switch operation {
        case .keys(let batch, _) where failure?.concernsOneKey == true && batch.count > 1:
            let alone = batch.sorted { $0.key < $1.key }.map { entry in LaneOperation<Value>.keys([entry.key: entry.value], alone: true) }
            record.queue.insert(contentsOf: alone, at: 0)
            domains[domain] = record
        case .keys(let batch, _):
            let keys = Array(batch.keys)
            let before = keys.map { record.effective($0) }
            for (key, write) in batch where record.local[key]?.generation == write.generation { record.local[key] = nil }
            domains[domain] = record
            actions.append(.writeFailed(domain, keys: keys.sorted(), reason: reason))
            reportChanges(domain, keys: keys, before: before)
            actions.append(.writeEnded(domain, tickets: Self.tickets(of: batch), failure: reason))
        case .replace(let values, let generation, let ticket):
            let keys = Array(record.knownKeys.union(values.map { Set($0.keys) } ?? []))
            let before = keys.map { record.effective($0) }
            if record.replaced?.generation == generation { record.replaced = nil }
            domains[domain] = record
            actions.append(.writeFailed(domain, keys: keys.sorted(), reason: reason))
            reportChanges(domain, keys: keys, before: before)
            actions.append(.writeEnded(domain, tickets: [ticket], failure: reason))
        }
        laneMoved(domain)
    }

    /// The tickets a batch carries, each once, oldest first.
    private static func tickets(of batch: [String: LocalWrite<Value>]) -> [UInt64] {
        var tickets = Set<UInt64>()
        for write in batch.values { tickets.formUnion(write.tickets) }
        return tickets.sorted()
    }

    private mutating func laneMoved(_ domain: ClientDomain) {
        if domains[domain]?.queue.isEmpty == false {
            actions.append(.flushNeeded(domain))
        } else if !hasPendingWrites() {
            actions.append(.writesSettled)
        }
    }

    // MARK: What readers see

    private mutating func reportChanges(_ domain: ClientDomain, keys: [String], before: [Value?]) {
        guard let record = domains[domain], record.everLoaded else { return }
        var changed: [String] = []
        for (index, key) in keys.enumerated() where record.effective(key) != before[index] {
            changed.append(key)
        }
        if !changed.isEmpty { actions.append(.changed(domain, keys: changed.sorted(), byWrite: false)) }
    }
}
