import ClientDriver
import Dispatch
import PreferencesClient
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import Synchronization

/// One process's link to prefsd on one bus, shared by every preferences object on it: the
/// connection, made on first use, and its ``ClientDriver`` — the client engine, the one
/// cache of prefsd's domains, kept true by prefsd's signals, with this process's writes laid
/// over it and sent on the engine's coalescing lanes. The session adds what the library
/// needs around it: loading for synchronous readers, the outcome of writes for their callers
/// and for `synchronize()`, and telling the preferences objects what changed.
///
/// Locking: no lock of the session is held while the driver is called, nor while a
/// preferences object's lock is taken, nor across a call on the bus.
final class BusSession: Sendable {
    /// How long a method call may take, activation of prefsd included.
    static let callTimeout: Duration = .seconds(25)
    /// The shortest time between two write calls of a domain, unless `synchronize()`
    /// waits: a key set in a tight loop costs one commit per interval.
    static let flushInterval: Duration = .milliseconds(20)

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
    /// Counts the connections made, so that events of one gone are told apart.
    private let connections = Atomic<UInt64>(0)
    /// The preferences objects to tell about changes.
    let subscribers = Mutex<[ObjectIdentifier: Subscriber]>([:])
    /// The outcome of writes, for their callers and for `synchronize()`.
    let writes = Mutex(Writes())
    /// Domains whose first load failed, not tried again before the instant given, so that
    /// reads without prefsd stay fast.
    let retryAfter = Mutex<[ClientDomain: ContinuousClock.Instant]>([:])
    /// Bumped on every change a reader may see; objects keep resolved values while it stands.
    let generation = Atomic<UInt64>(1)
    /// Where observers, notifications and change streams are called: never the bus
    /// connection's own queue, so they may read preferences freely.
    private let deliveryQueue = DispatchQueue(label: "Preferences.delivery")
    /// Deliveries waiting for the delivery queue, and whether a drain of them is scheduled:
    /// a burst of changes wakes the queue once, not once per change.
    private let deliveries = Mutex<(pending: [@Sendable () -> Void], scheduled: Bool)>(([], false))

    private enum Link: Sendable {
        case idle
        /// The driver (on its proxy), its connection's number, and the subscription that
        /// tells of the end of the connection.
        case connected(ClientDriver, UInt64, PreferencesSubscription)
        /// The bus could not be reached; not tried again before `retryAfter`.
        case unavailable(reason: String, retryAfter: ContinuousClock.Instant)
    }

    /// A preferences object told about changes, held weakly.
    final class Subscriber: Sendable {
        weak let preferences: Preferences?
        init(_ preferences: Preferences) { self.preferences = preferences }
    }

    private init(address: String?) {
        self.address = address
    }

    // MARK: The connection

    /// The driver on the current connection, if one is made (never connects).
    var currentDriver: ClientDriver? {
        if case .connected(let driver, _, _) = link.withLock({ $0 }) { return driver }
        return nil
    }

    /// The driver and its connection's number, on a connection made on first use. When the
    /// bus cannot be reached the reason is remembered for a second, so reads that fall
    /// back on local domains stay fast.
    func connect() throws(PreferencesError) -> (driver: ClientDriver, connection: UInt64) {
        let now = ContinuousClock.now
        switch link.withLock({ $0 }) {
        case .connected(let driver, let number, _): return (driver, number)
        case .unavailable(let reason, let retryAfter) where now < retryAfter: throw .serviceUnavailable(reason)
        default: break
        }
        let number = connections.add(1, ordering: .relaxed).newValue
        let driver: ClientDriver
        let events: PreferencesSubscription
        do throws(PreferencesProxyError) {
            let proxy = try PreferencesProxy.connect(address: address)
            driver = ClientDriver(proxy: proxy, flushInterval: Self.flushInterval) { [weak self] event in
                self?.receive(event, connection: number)
            }
            // A lost connection brings no more signals: a new one is made on next use.
            events = try proxy.observeBlocking([]) { [weak self] event in
                if case .disconnected = event { self?.disconnected(number) }
            }
        } catch {
            let reason = error.description
            link.withLock { $0 = .unavailable(reason: reason, retryAfter: now + .seconds(1)) }
            throw .serviceUnavailable(reason)
        }
        let winner = link.withLock { link -> (ClientDriver, UInt64) in
            if case .connected(let existing, let existingNumber, _) = link { return (existing, existingNumber) }
            link = .connected(driver, number, events)
            return (driver, number)
        }
        if winner.0 !== driver {
            events.cancel()
            driver.proxy.close()
        }
        generation.add(1, ordering: .releasing)
        return winner
    }

    /// The driver, made on first use.
    func driver() throws(PreferencesError) -> ClientDriver {
        try connect().driver
    }

    /// The connection numbered `number` is lost: a new one (with a cache loaded again) is
    /// made on next use.
    private func disconnected(_ number: UInt64) {
        let gone = link.withLock { link -> Link? in
            guard case .connected(_, let current, _) = link, current == number else { return nil }
            defer { link = .idle }
            return link
        }
        guard case .connected(let driver, _, let events)? = gone else { return }
        events.cancel()
        driver.proxy.close()
        generation.add(1, ordering: .releasing)
        retryAfter.withLock { $0 = [:] }
        // The writes in flight fail with the connection and are answered through the
        // driver; wake `synchronize()` in case none was.
        wakeWriteWaiters()
    }

    // MARK: Delivery

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

    /// The live preferences objects of the session.
    var objects: [Preferences] {
        subscribers.withLock { $0.values.compactMap(\.preferences) }
    }

    /// Registers a preferences object for change delivery, forgetting those released.
    func subscribe(_ preferences: Preferences) {
        subscribers.withLock { subscribers in
            subscribers = subscribers.filter { $0.value.preferences != nil }
            subscribers[ObjectIdentifier(preferences)] = Subscriber(preferences)
        }
    }

    /// Notifies the objects that search `domain` (and `origin`, the object a change was made
    /// through) that `keys` may have changed, on the delivery queue: each compares the
    /// effective values with those it told last. `posting`: the domain's values changed,
    /// so every object searching it posts `didChangeNotification` (the origin always does).
    func notifyObjects(_ domain: DomainName?, keys: [String], posting: Bool, origin: Preferences? = nil) {
        generation.add(1, ordering: .releasing)
        let targets = objects.filter { preferences in
            preferences === origin || domain.map { preferences.layers.serviceDomains.contains($0) } == true
        }
        guard !targets.isEmpty else { return }
        deliver {
            for preferences in targets {
                preferences.evaluate(keys, posting: posting || preferences === origin)
            }
        }
    }
}
