import DBus
import Dispatch
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import Synchronization

/// One process's link to prefsd on one bus: the connection, made on first use; the cache
/// of domains it keeps true with the service's signals; and the writes in flight. Every
/// preferences object on the same bus shares it.
///
/// Locking: `state` guards the cache and the subscribers. A preferences object's own lock
/// may be taken while `state` is held, never the other way round, and no lock is held
/// across a call on the bus.
final class BusSession: Sendable {
    /// How long a method call may take, activation of prefsd included.
    static let callTimeout: Duration = .seconds(25)

    private static let sessions = Mutex<[String: BusSession]>([:])

    /// The session for a bus address (`nil`: the session bus), shared by the process.
    static func shared(address: String?) -> BusSession {
        sessions.withLock { sessions in
            let key = address ?? ""
            if let session = sessions[key] { return session }
            let session = BusSession(address: address)
            sessions[key] = session
            return session
        }
    }

    private let address: String?
    private let link = Mutex(Link.idle)
    let state = Mutex(State())
    let writes = Mutex(Writes())
    /// Bumped on every change to the cache; objects keep resolved values while it stands.
    let generation = Atomic<UInt64>(1)
    /// Where observers, notifications and change streams are called: never the bus
    /// connection's own queue, so they may read preferences freely.
    private let deliveryQueue = DispatchQueue(label: "Preferences.delivery")
    /// Deliveries waiting for the delivery queue, and whether a drain of them is scheduled:
    /// a burst of changes wakes the queue once, not once per change.
    private let deliveries = Mutex<(pending: [@Sendable () -> Void], scheduled: Bool)>(([], false))

    private enum Link: Sendable {
        case idle
        case connected(DBusConnection)
        /// The bus could not be reached; not tried again before `retryAfter`.
        case unavailable(reason: String, retryAfter: ContinuousClock.Instant)
    }

    struct State: Sendable {
        var cache = DomainCache()
        /// Domains being loaded, with the signals that arrived meanwhile.
        var loading: [DomainName: Loading] = [:]
        /// The preferences objects to tell about changes.
        var subscribers: [ObjectIdentifier: Subscriber] = [:]
        /// Domains whose load failed, not tried again before the instant given, so that
        /// reads without prefsd stay fast.
        var retryAfter: [DomainName: ContinuousClock.Instant] = [:]
        /// Volatile domains this process set (contents) or removed (`nil`), not answered yet.
        var volatilePending: [DomainName: PendingVolatile] = [:]
        var volatileGeneration: UInt64 = 0
    }

    /// A change of a volatile domain sent and not answered yet.
    struct PendingVolatile: Sendable {
        var values: [String: PropertyListValue]?
        var generation: UInt64
    }

    struct Loading: Sendable {
        let done = DispatchGroup()
        var buffered: [DBusMessage] = []
    }

    /// A preferences object told about changes, held weakly.
    final class Subscriber: Sendable {
        weak let preferences: Preferences?
        init(_ preferences: Preferences) { self.preferences = preferences }
    }

    struct Writes: Sendable {
        /// Operations queued or sent and not answered yet.
        var inFlight = 0
        /// Each persistent domain's writes, in order (a domain's lane is kept once made).
        var lanes: [DomainName: WriteLane] = [:]
        /// `synchronize()` calls waiting: batches are sent without waiting for their interval.
        var flushing = 0
        var failures: [PreferencesError] = []
        var waiters: [DispatchSemaphore] = []
    }

    private init(address: String?) {
        self.address = address
    }

    // MARK: The connection

    /// The connection, made on first use. When the bus cannot be reached the reason is
    /// remembered for a second, so reads that fall back on local domains stay fast.
    func connection() throws(PreferencesError) -> DBusConnection {
        let now = ContinuousClock.now
        switch link.withLock({ $0 }) {
        case .connected(let connection): return connection
        case .unavailable(let reason, let retryAfter) where now < retryAfter: throw .serviceUnavailable(reason)
        default: break
        }
        let made: DBusConnection
        do {
            if let address {
                made = try DBusConnection.connect(address: address)
            } else {
                made = try DBusConnection.connectToSessionBus()
            }
        } catch {
            let reason = error.description
            link.withLock { $0 = .unavailable(reason: reason, retryAfter: now + .seconds(1)) }
            throw .serviceUnavailable(reason)
        }
        let winner = link.withLock { link -> DBusConnection in
            if case .connected(let existing) = link { return existing }
            link = .connected(made)
            return made
        }
        guard winner === made else {
            made.close()
            return winner
        }
        made.setSignalHandler { [weak self] signal in self?.receive(signal) }
        made.setDisconnectHandler { [weak self] in self?.disconnected() }
        // A prefsd that exits and is started again has lost its volatile domains: follow
        // the owner of its name and load again after a change.
        made.call(.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "AddMatch", body: [.string(PreferencesEndpoint.current.ownerRule)]
        )) { _ in }
        return made
    }

    private func disconnected() {
        link.withLock { $0 = .idle }
        // Without a connection no signal keeps the cache true: load again on next use.
        unloadAll()
    }

    /// Forgets every loaded domain; each is loaded again when next read.
    func unloadAll() {
        mutate(notify: false) { cache in
            for domain in cache.domains.keys { cache.unload(domain) }
        }
    }

    /// Sends one of the proxy's requests, blocking the calling thread; returns its reply
    /// read, and the reply's serial (signals with a higher one were sent after it).
    func callBlocking<Reply>(_ request: PreferencesRequest<Reply>) throws(PreferencesError) -> (value: Reply, serial: UInt32) {
        let connection = try connection()
        do {
            let reply = try connection.callBlocking(request.message, timeout: Self.callTimeout)
            return (try request.reply(reply.body), reply.serial)
        } catch let error as DBusError {
            throw PreferencesError(error)
        } catch let error as PreferencesProxyError {
            throw PreferencesError(error)
        } catch {
            throw .refused(name: "prefsd", message: "\(error)")
        }
    }

    /// One round trip to prefsd: its answer comes after every signal it sent before, and the
    /// connection's queue hands signals and answers over in order, so when this returns the
    /// cache holds every change committed before it was called.
    /// - Returns: false when prefsd could not be reached.
    func catchUp() -> Bool {
        do {
            // To the connection whose signals we follow: the door inside a sandbox.
            _ = try connection().callBlocking(.methodCall(
                destination: PreferencesEndpoint.current.busName, path: PreferencesBus.objectPath,
                interface: "org.freedesktop.DBus.Peer", member: "Ping", body: []
            ), timeout: Self.callTimeout)
        } catch {
            return false
        }
        // Domains read again because a signal left values out hold their signals back
        // until they are read: wait for them.
        let refreshing = state.withLock { $0.loading.values.map(\.done) }
        for done in refreshing { _ = done.wait(timeout: .now() + .seconds(30)) }
        return true
    }

    /// Runs `work` on the delivery queue, after the work handed over before it.
    func deliver(_ work: @escaping @Sendable () -> Void) {
        let schedule = deliveries.withLock { deliveries -> Bool in
            deliveries.pending.append(work)
            defer { deliveries.scheduled = true }
            return !deliveries.scheduled
        }
        guard schedule else { return }
        deliveryQueue.async { [self] in
            while true {
                let batch = deliveries.withLock { deliveries -> [@Sendable () -> Void] in
                    if deliveries.pending.isEmpty { deliveries.scheduled = false }
                    defer { deliveries.pending = [] }
                    return deliveries.pending
                }
                if batch.isEmpty { return }
                for work in batch { work() }
            }
        }
    }

    // MARK: Changing the cache

    /// Changes the cache and tells the preferences objects that search the domain: each
    /// observer whose effective value changed, and `didChangeNotification` for each object
    /// that saw the domain change (or whose effective values changed), and for `origin`,
    /// the object that made the change, always.
    /// - Parameters:
    ///   - domain: the domain the change is about, or `nil` for any.
    ///   - keys: the keys that may change, or `nil` for every key of the domain, before or after.
    ///   - notify: false for loads and unloads, which change no value anyone has seen.
    ///   - origin: the object the change was made through, if any.
    @discardableResult
    func mutate<Result: Sendable>(
        domain: DomainName? = nil, keys: Set<String>? = nil, notify: Bool = true, origin: Preferences? = nil,
        _ body: (inout DomainCache) -> Result
    ) -> Result {
        mutateState(domain: domain, keys: keys, notify: notify, origin: origin) { body(&$0.cache) }
    }

    /// `mutate`, with the whole state at hand (for a load, which also ends its `loading`).
    @discardableResult
    func mutateState<Result: Sendable>(
        domain: DomainName? = nil, keys: Set<String>? = nil, notify: Bool = true, origin: Preferences? = nil,
        _ body: (inout State) -> Result
    ) -> Result {
        let (result, deliveries) = state.withLock { state -> (Result, [Delivery]) in
            guard notify, let domain else {
                let result = body(&state)
                generation.add(1, ordering: .releasing)
                return (result, [])
            }
            var watchers = state.subscribers.values.compactMap(\.preferences).compactMap { preferences -> (Preferences, Layers)? in
                let layers = preferences.layers
                return layers.serviceDomains.contains(domain) ? (preferences, layers) : nil
            }
            if let origin, !watchers.contains(where: { $0.0 === origin }) { watchers.append((origin, origin.layers)) }
            let result: Result
            let affected: [String]
            let before: Seen
            if let keys {
                affected = Array(keys)
                before = Seen(domain, affected, watchers, in: state.cache)
                result = body(&state)
            } else {
                // The keys of a whole-domain change are known only after it: compare with a copy.
                let previous = state.cache
                result = body(&state)
                affected = Array(previous.keys(domain).union(state.cache.keys(domain)))
                before = Seen(domain, affected, watchers, in: previous)
            }
            generation.add(1, ordering: .releasing)
            let after = Seen(domain, affected, watchers, in: state.cache)
            var deliveries: [Delivery] = []
            for (index, (preferences, _)) in watchers.enumerated() {
                let changes = affected.indices.compactMap { keyIndex -> PreferencesChange? in
                    let now = after.effective[index][keyIndex]
                    return now == before.effective[index][keyIndex] ? nil : PreferencesChange(key: affected[keyIndex], value: now)
                }
                if preferences === origin || !changes.isEmpty || after.domain != before.domain {
                    deliveries.append(Delivery(preferences: preferences, changes: changes))
                }
            }
            return (result, deliveries)
        }
        for delivery in deliveries { delivery.preferences.deliver(delivery.changes) }
        return result
    }

    /// What a change is told to one preferences object (which also gets `didChangeNotification`).
    struct Delivery {
        var preferences: Preferences
        var changes: [PreferencesChange]
    }

    /// The values of some keys as the domain shows them, and as each watcher resolves them.
    private struct Seen {
        var domain: [PropertyListValue?]
        var effective: [[PropertyListValue?]]

        init(_ name: DomainName, _ keys: [String], _ watchers: [(Preferences, Layers)], in cache: DomainCache) {
            domain = keys.map { cache.value(name, $0) }
            effective = watchers.map { _, layers in keys.map { layers.resolve($0, in: cache) } }
        }
    }

    /// Registers a preferences object for change delivery, forgetting those released.
    func subscribe(_ preferences: Preferences) {
        state.withLock { state in
            state.subscribers = state.subscribers.filter { $0.value.preferences != nil }
            state.subscribers[ObjectIdentifier(preferences)] = Subscriber(preferences)
        }
    }
}
