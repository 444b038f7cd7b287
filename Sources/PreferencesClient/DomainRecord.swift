/// A confirmed value (`nil`: removed) and the serial of prefsd's message that told it.
struct Stamped<Value: Sendable>: Sendable {
    var value: Value?
    var serial: UInt32
}

/// A write of this process laid over the cache until prefsd answers it: the value
/// (`nil`: a removal) and the number of the write, so that the answer of an older write
/// never lifts a newer one.
struct LocalWrite<Value: Sendable>: Sendable {
    var value: Value?
    var generation: UInt64
    /// The tickets of the writes this one stands for (see ``ClientEngine/submit(_:in:)``):
    /// its own, and those of the earlier writes of the key it replaced while queued, whose
    /// outcome is its outcome.
    var tickets: [UInt64] = []
}

/// One call on a domain's write lane.
enum LaneOperation<Value: Sendable>: Sendable {
    /// Key writes, merged while queued (the last value of a key wins). `alone`: a key of a
    /// refused batch sent again by itself, never merged into.
    case keys([String: LocalWrite<Value>], alone: Bool)
    /// A whole-domain replacement (`nil`: removal), its generation and its ticket.
    case replace([String: Value]?, generation: UInt64, ticket: UInt64)

    var keys: [String] {
        switch self {
        case .keys(let batch, _): Array(batch.keys)
        case .replace: []
        }
    }
}

/// The answers of a load as they come: a persistent domain's load is two calls sent at
/// once (`ReadDomain` and `ForcedKeys`), answered in either order.
struct LoadAnswers<Value: Sendable>: Sendable {
    var values: (values: [String: Value], serial: UInt32, sender: String?)?
    var forced: (keys: Set<String>, serial: UInt32?)?
    /// Why a call of the load failed (the first failure wins).
    var failure: String?
    /// How many of the load's calls have been answered.
    var answered = 0
}

/// Everything the engine knows of one domain.
struct DomainRecord<Value: Equatable & Sendable>: Sendable {
    /// Whether the first load is done (so its values are visible).
    var everLoaded = false
    /// The first load failed.
    var failed = false
    /// The load in flight, if any, and the owner known when it was sent (`nil`: none
    /// known yet, so whoever the bus starts answers it).
    var loadToken: UInt64?
    var loadOwner: String?
    /// The answers of the load in flight that have come.
    var loadAnswers = LoadAnswers<Value>()
    /// The highest serial of a signal that invalidated the domain while a load was in
    /// flight: an answer older than it is loaded again.
    var invalidatedSerial: UInt32 = 0
    /// Whose answer the values are (the unique name of prefsd's connection).
    var loadedFrom: String?

    var confirmed: [String: Stamped<Value>] = [:]
    /// The newest serial of prefsd's messages recorded for the domain.
    var newestSerial: UInt32 = 0
    var forced: Set<String> = []
    var forcedSerial: UInt32 = 0

    /// Writes of this process not answered yet, newest per key.
    var local: [String: LocalWrite<Value>] = [:]
    /// A whole-domain replacement not answered yet (the keys written after it included).
    var replaced: (values: [String: Value], generation: UInt64)?

    /// The lane: operations queued, and the one in flight with its token.
    var queue: [LaneOperation<Value>] = []
    var inFlight: (operation: LaneOperation<Value>, token: UInt64)?
    /// ``newestSerial`` when the call in flight was sent: every message newer than it may
    /// tell what the call's commit left (see ``ClientEngine/writeAnswered(_:token:serial:sender:)``).
    var inFlightFloor: UInt32 = 0

    var phase: ClientDomainPhase {
        if everLoaded { return .loaded }
        return failed && loadToken == nil ? .unavailable : .loading
    }

    var hasWrites: Bool { inFlight != nil || !queue.isEmpty }

    /// The value readers see: this process's newest write, else its pending
    /// replacement, else prefsd's.
    func effective(_ key: String) -> Value? {
        if let write = local[key] { return write.value }
        if let replaced { return replaced.values[key] }
        return confirmed[key]?.value ?? nil
    }

    /// Every key that has a value or a pending write.
    var knownKeys: Set<String> {
        var keys = Set(confirmed.keys).union(local.keys)
        if let replaced { keys.formUnion(replaced.values.keys) }
        return keys
    }

    /// Records `value` for `key` as of `serial`, unless a newer message told it already.
    mutating func record(_ key: String, _ value: Value?, serial: UInt32) {
        newestSerial = max(newestSerial, serial)
        if let known = confirmed[key], known.serial > serial { return }
        confirmed[key] = Stamped(value: value, serial: serial)
    }

    /// Records a whole-domain snapshot as of `serial`: its keys, and every other key known
    /// as removed (keys a newer message told stay as it told them).
    mutating func recordSnapshot(_ values: [String: Value], serial: UInt32) {
        for (key, value) in values { record(key, value, serial: serial) }
        for key in Array(confirmed.keys) where values[key] == nil { record(key, nil, serial: serial) }
    }

    /// Records the forced keys as of `serial`; returns the keys whose forcing changed.
    mutating func recordForced(_ keys: Set<String>, serial: UInt32) -> Set<String> {
        guard serial >= forcedSerial else { return [] }
        let changed = forced.symmetricDifference(keys)
        forced = keys
        forcedSerial = serial
        return changed
    }

    /// Forgets the serials: a new prefsd numbers its messages from 1 again.
    mutating func resetSerials() {
        for key in Array(confirmed.keys) { confirmed[key]?.serial = 0 }
        forcedSerial = 0
        invalidatedSerial = 0
    }

    /// Queues key writes on the lane, merged into the last queued batch when it can be.
    /// Returns true when the lane was idle and empty (a flush is needed).
    mutating func enqueue(_ writes: [String: LocalWrite<Value>]) -> Bool {
        let wasIdle = queue.isEmpty && inFlight == nil
        if case .keys(var batch, let alone)? = queue.last, !alone {
            for (key, var write) in writes {
                write.tickets = (batch[key]?.tickets ?? []) + write.tickets
                batch[key] = write
            }
            queue[queue.count - 1] = .keys(batch, alone: false)
        } else {
            queue.append(.keys(writes, alone: false))
        }
        return wasIdle
    }
}
