import DBus
import Dispatch
import Foundation
import PreferencesModel
import PreferencesProtocol
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
    let deliveryQueue = DispatchQueue(label: "Preferences.delivery")

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
        var inFlight = 0
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

    /// A call of prefsd at this process's endpoint (the sandbox door inside Flatpak).
    static func message(_ method: PreferencesMethod, _ body: [DBusValue]) -> DBusMessage {
        PreferencesEndpoint.current.call(method, body)
    }

    /// Calls a method of the service, blocking the calling thread.
    func callBlocking(_ method: PreferencesMethod, _ body: [DBusValue]) throws(PreferencesError) -> DBusMessage {
        let connection = try connection()
        do {
            return try connection.callBlocking(Self.message(method, body), timeout: Self.callTimeout)
        } catch {
            throw PreferencesError(error)
        }
    }

    // MARK: Changing the cache

    /// Changes the cache and tells every subscriber whose effective values changed.
    /// - Parameters:
    ///   - domain: the domain the change is about, or `nil` for any.
    ///   - keys: the keys that may change, or `nil` for every key of the domain.
    ///   - notify: false for loads and unloads, which change no value anyone has seen.
    @discardableResult
    func mutate<Result: Sendable>(
        domain: DomainName? = nil, keys: Set<String>? = nil, notify: Bool = true,
        _ body: (inout DomainCache) -> Result
    ) -> Result {
        let (result, deliveries) = state.withLock { state -> (Result, [(Preferences, [PreferencesChange])]) in
            guard notify, let domain else {
                let result = body(&state.cache)
                generation.add(1, ordering: .releasing)
                return (result, [])
            }
            let affected = Array(keys ?? state.cache.keys(domain))
            let watchers = state.subscribers.values.compactMap(\.preferences).compactMap { preferences -> (Preferences, Layers)? in
                let layers = preferences.layers
                return layers.searchList.serviceDomains.contains(domain) ? (preferences, layers) : nil
            }
            let before = watchers.map { _, layers in affected.map { layers.resolve($0, in: state.cache) } }
            let result = body(&state.cache)
            generation.add(1, ordering: .releasing)
            var deliveries: [(Preferences, [PreferencesChange])] = []
            for (index, (preferences, layers)) in watchers.enumerated() {
                var changes: [PreferencesChange] = []
                for (keyIndex, key) in affected.enumerated() {
                    let now = layers.resolve(key, in: state.cache)
                    if now != before[index][keyIndex] { changes.append(PreferencesChange(key: key, value: now)) }
                }
                if !changes.isEmpty { deliveries.append((preferences, changes)) }
            }
            return (result, deliveries)
        }
        for (preferences, changes) in deliveries { preferences.deliver(changes) }
        return result
    }

    /// Registers a preferences object for change delivery, forgetting those released.
    func subscribe(_ preferences: Preferences) {
        state.withLock { state in
            state.subscribers = state.subscribers.filter { $0.value.preferences != nil }
            state.subscribers[ObjectIdentifier(preferences)] = Subscriber(preferences)
        }
    }
}
