import DBus
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

/// A key write of this process not sent yet: its value (`nil` for a removal), the
/// generation of its local write in the cache, and who waits for its outcome (the callers of
/// the earlier writes of the key it replaced too).
struct PendingKey: Sendable {
    var value: PropertyListValue?
    var generation: UInt64
    var completions: [BusSession.Completion] = []
}

/// What is queued on a domain's lane.
enum LaneItem: Sendable {
    /// A key write, merged with the other key writes queued after the last whole-domain call.
    case key(String, PendingKey)
    /// A whole-domain call (ReplaceDomain, RemoveDomain), with what to do once answered.
    case call(DBusMessage, answered: @Sendable (Result<DBusMessage, DBusError>) -> Void)
}

/// The writes of one persistent domain, in the order they were made: one operation in
/// flight at a time, and the key writes made meanwhile merged into one batch (the last
/// value of each key wins), so that a key set thousands of times a second reaches the disk
/// as one commit per round trip (and at most one per `interval`), not one per call.
struct WriteLane: Sendable {
    /// The shortest time between two key batches of a domain, unless `synchronize()` waits.
    static let interval: Duration = .milliseconds(20)
    /// A batch takes at most this many keys…
    static let maximumKeys = 4096
    /// …and about this many bytes of marshalled values (a new batch starts past it).
    static let maximumBytes = 4 << 20

    /// One call to the service.
    struct Operation: Sendable {
        enum Payload: Sendable {
            case keys([String: PendingKey])
            case call(DBusMessage)
        }

        var payload: Payload
        var bytes = 0
        /// Sent without waiting for `interval`, and never merged into: one key of a refused batch.
        var alone = false
        var answered: (@Sendable (Result<DBusMessage, DBusError>) -> Void)?

        /// The call: `Write` or `Remove` for one key, `Apply` for several.
        func message(_ domain: DomainName) -> DBusMessage {
            switch payload {
            case .call(let message):
                return message
            case .keys(let batch):
                if batch.count == 1, let (key, pending) = batch.first {
                    return pending.value.map { PreferencesCall.write(domain.rawValue, key, $0).message }
                        ?? PreferencesCall.remove(domain.rawValue, key).message
                }
                var set: [String: PropertyListValue] = [:]
                var remove: [String] = []
                for (key, pending) in batch {
                    if let value = pending.value { set[key] = value } else { remove.append(key) }
                }
                return PreferencesCall.apply(domain.rawValue, set: set, remove: remove.sorted()).message
            }
        }
    }

    /// What `next` decided.
    enum Step {
        case send(Operation)
        /// Wait this long, then ask again.
        case wait(Duration)
        case nothing
    }

    private(set) var queue: [Operation] = []
    /// An operation is sent and not answered.
    var busy = false
    /// A timer will ask `next` again.
    var timerArmed = false
    private var lastSent: ContinuousClock.Instant?

    /// Queues an item. Returns true when it joined the queued batch (no new operation).
    mutating func merge(_ item: LaneItem) -> Bool {
        switch item {
        case .key(let key, var pending):
            let bytes = key.utf8.count + (pending.value?.dbusVariant.marshalledSize ?? 0)
            if var last = queue.last, case .keys(var batch) = last.payload, !last.alone,
               batch.count < Self.maximumKeys, last.bytes + bytes <= Self.maximumBytes {
                pending.completions = (batch[key]?.completions ?? []) + pending.completions
                batch[key] = pending
                last.payload = .keys(batch)
                last.bytes += bytes
                queue[queue.count - 1] = last
                return true
            }
            queue.append(Operation(payload: .keys([key: pending]), bytes: bytes))
            return false
        case .call(let message, let answered):
            queue.append(Operation(payload: .call(message), answered: answered))
            return false
        }
    }

    /// Queues the keys of a refused batch first, each alone, so that each is sent again and
    /// refused or stored by itself (as separate sets would be). Returns how many were queued.
    mutating func split(_ operation: Operation) -> Int {
        guard case .keys(let batch) = operation.payload else { return 0 }
        let alone = batch.sorted { $0.key < $1.key }.map { key, pending in
            Operation(payload: .keys([key: pending]), alone: true)
        }
        queue.insert(contentsOf: alone, at: 0)
        return alone.count
    }

    /// The operation to send now, if any: none while one is in flight, and a key batch no
    /// sooner than `interval` after the previous operation unless `flushing`.
    mutating func next(now: ContinuousClock.Instant, flushing: Bool) -> Step {
        guard !busy, let first = queue.first else { return .nothing }
        if case .keys = first.payload, !first.alone, !flushing, let lastSent, now < lastSent + Self.interval {
            if timerArmed { return .nothing }
            timerArmed = true
            return .wait(lastSent + Self.interval - now)
        }
        queue.removeFirst()
        busy = true
        lastSent = now
        return .send(first)
    }
}
