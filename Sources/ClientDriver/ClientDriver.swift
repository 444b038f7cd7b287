import Dispatch
import PreferencesClient
import PreferencesModel
import PreferencesProxy
import StandardExtras
import Synchronization

/// What a ``ClientDriver`` tells its owner: the engine's events, in the order it made them.
public enum ClientDriverEvent: Sendable {
    /// The first load of the domain ended (`loaded`: its values are in; else prefsd could
    /// not be reached or refused).
    case loadFinished(ClientDomain, loaded: Bool)
    /// The values readers see changed for these keys (`byWrite`: this process's write).
    case changed(ClientDomain, keys: [String], byWrite: Bool)
    /// Whether these keys are forced changed.
    case forcedChanged(ClientDomain, keys: [String])
    /// A write of these keys was refused or failed; they read as before it.
    case writeFailed(ClientDomain, keys: [String], reason: String)
    /// The writes with these tickets (from ``ClientDriver/submit(_:in:)``) ended: stored
    /// (`failure` is `nil`), or refused or failed with prefsd's error. Told after the
    /// events of what readers now see.
    case writeEnded(ClientDomain, tickets: [UInt64], failure: PreferencesProxyError?)
    /// No write of this process is queued or in flight any more.
    case writesSettled
}

/// The client engine (``ClientEngine``) driven over ``PreferencesProxy``: the one domain
/// cache of a process that talks to prefsd through the proxy. It feeds the engine prefsd's
/// answers and signals and carries out what the engine asks, in the order it asks:
///
/// - a domain's subscription and its load go out together (the subscription is queued
///   before the load, and the bus handles one connection's messages in order), so the
///   first read of a domain costs one round trip; a persistent domain's load is
///   `ReadDomain` and `ForcedKeys` sent at once;
/// - the signals come raw (their invalidated keys are not re-read by the proxy: the engine
///   loads the domain again), already filtered by the proxy to those of prefsd's owner;
/// - a lane's write goes out as soon as the engine asks for it; writes made while it is in
///   flight are merged by the engine into the next call.
///
/// The engine is kept behind a lock that is never held while a call is sent or an event is
/// told: actions are drained, in order, by one thread at a time.
///
/// Locking: each `Mutex` guards one piece of state (the engine, the queue of actions, the
/// subscriptions, the failures, the waiters, the lanes) and is held only to read or
/// change it. No lock is taken while another is held (the atomic `urgent` is read inside
/// `lanes`, which takes no lock), and none is held across a call to the proxy, an event
/// callback or a wait, so there is no lock order to keep.
public final class ClientDriver: Sendable {
    /// The proxy the driver calls prefsd through.
    public let proxy: PreferencesProxy
    private let engine = Mutex(ClientEngine<PropertyListValue>())
    private let work = Mutex(Work())
    private let subscriptions = Mutex<[ClientDomain: PreferencesSubscription]>([:])
    /// The error of each domain's last failed write call, until its `writeEnded` is told
    /// (one call is in flight per domain, so it is that call's).
    private let failures = Mutex<[ClientDomain: PreferencesProxyError]>([:])
    private let events: @Sendable (ClientDriverEvent) -> Void
    /// Why each domain's last load failed (see ``loadFailure(of:)``).
    private let loadFailures = Mutex<[ClientDomain: PreferencesProxyError]>([:])
    /// Each domain's load in flight (its token) and the first error of its calls, if one
    /// failed: what ``loadFailure(of:)`` says once it ends. Answers to an older load of
    /// the domain (which the engine ignores) are ignored here too.
    private let loadsInFlight = Mutex<[ClientDomain: (token: UInt64, error: PreferencesProxyError?)]>([:])
    /// Threads waiting in ``waitForLoads(timeout:)``.
    private let loadWaiters = Mutex<[DispatchSemaphore]>([])

    private struct Work: Sendable {
        var pending: [ClientAction<PropertyListValue>] = []
        var draining = false
    }

    /// The shortest time between two calls of a domain's lane (zero: each goes as soon as
    /// the one before is answered), unless ``flushingAtOnce(_:)`` waits.
    private let flushInterval: Duration
    /// When each domain's lane last sent a call, and the lanes whose next call waits for
    /// the interval.
    private let lanes = Mutex<(lastSent: [ClientDomain: ContinuousClock.Instant], waiting: Set<ClientDomain>)>(([:], []))
    /// Callers of ``flushingAtOnce(_:)`` under way: while there are any, nothing waits.
    private let urgent = Atomic<Int>(0)

    /// A driver calling prefsd through `proxy` and telling `events` what changed (called on
    /// the thread that drains the engine's actions: it must not block). `flushInterval`:
    /// the shortest time between two write calls of a domain; the writes made meanwhile
    /// merge into the next call, so a key set in a tight loop costs one commit per
    /// interval (zero: a call goes as soon as the one before it is answered).
    public init(proxy: PreferencesProxy, flushInterval: Duration = .zero, events: @escaping @Sendable (ClientDriverEvent) -> Void) {
        self.proxy = proxy
        self.flushInterval = flushInterval
        self.events = events
    }

    // MARK: Reading

    /// Where the domain's load stands.
    public func phase(of domain: ClientDomain) -> ClientDomainPhase {
        engine.withLock { $0.phase(of: domain) }
    }

    /// The value readers see for `key` (this process's pending writes over prefsd's values).
    public func value(_ key: String, in domain: ClientDomain) -> PropertyListValue? {
        engine.withLock { $0.value(key, in: domain) }
    }

    /// Every key of the domain with the value readers see.
    public func entries(of domain: ClientDomain) -> [String: PropertyListValue] {
        engine.withLock { $0.entries(of: domain) }
    }

    /// The keys an administrator forces in the domain.
    public func forcedKeys(in domain: ClientDomain) -> Set<String> {
        engine.withLock { $0.forcedKeys(in: domain) }
    }

    /// Whether an administrator forces `key` in the domain.
    public func isForced(_ key: String, in domain: ClientDomain) -> Bool {
        engine.withLock { $0.isForced(key, in: domain) }
    }

    /// The domains followed.
    public var followedDomains: [ClientDomain] {
        engine.withLock { $0.followedDomains }
    }

    /// Why the domain's last load failed, until one succeeds (`nil`: none failed).
    public func loadFailure(of domain: ClientDomain) -> PreferencesProxyError? {
        loadFailures.withLock { $0[domain] }
    }

    /// Whether a write of this process is queued or in flight (in `domain`, or in any).
    public func hasPendingWrites(in domain: ClientDomain? = nil) -> Bool {
        engine.withLock { $0.hasPendingWrites(in: domain) }
    }

    // MARK: Following

    /// Follows `domain` (the first time: subscribes and loads it, in one round trip);
    /// returns the phase after the call.
    @discardableResult
    public func follow(_ domain: ClientDomain) -> ClientDomainPhase {
        run { $0.follow(domain) }
    }

    /// Follows `domain` and returns once its first load has ended: whether it is loaded.
    public func load(_ domain: ClientDomain) async -> Bool {
        switch follow(domain) {
        case .loaded: return true
        case .unavailable: return false
        case .loading, .unknown: break
        }
        return await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
            waiters.withLock { $0[domain, default: []].append(continuation) }
            // Finished meanwhile: nobody else will resume it.
            let phase = self.phase(of: domain)
            guard phase != .loading else { return }
            resumeWaiters(domain, loaded: phase == .loaded)
        }
    }

    private let waiters = Mutex<[ClientDomain: [CheckedContinuation<Bool, Never>]]>([:])
    private let blockedWaiters = Mutex<[ClientDomain: [DispatchSemaphore]]>([:])

    private func resumeWaiters(_ domain: ClientDomain, loaded: Bool) {
        let waiting = waiters.withLock { $0.removeValue(forKey: domain) } ?? []
        for waiter in waiting { waiter.resume(returning: loaded) }
        let blocked = blockedWaiters.withLock { $0.removeValue(forKey: domain) } ?? []
        for waiter in blocked { waiter.signal() }
    }

    /// Follows every domain and blocks the calling thread until each first load has
    /// ended (or `timeout` passed): whether all are loaded. Every domain's subscription and
    /// load go out before any answer is awaited, so the domains cost one round trip
    /// together. For synchronous callers (the `Preferences` library); never call it on the
    /// queue that delivers the proxy's answers.
    public func loadBlocking(_ domains: [ClientDomain], timeout: Duration) -> Bool {
        for domain in domains { follow(domain) }
        let deadline = DispatchTime.now() + timeout.dispatchInterval
        var loaded = true
        for domain in domains {
            let semaphore = DispatchSemaphore(value: 0)
            blockedWaiters.withLock { $0[domain, default: []].append(semaphore) }
            // Finished before the waiter was in place: nobody signals it.
            if phase(of: domain) == .loading, semaphore.wait(timeout: deadline) == .timedOut {
                blockedWaiters.withLock { $0[domain]?.removeAll { $0 === semaphore } }
            }
            loaded = loaded && phase(of: domain) == .loaded
        }
        return loaded
    }

    /// Blocks the calling thread until no load is on its way (first loads and reloads,
    /// such as those of the values a signal left out), or `timeout` passed: whether none is.
    /// Never call it on the queue that delivers the proxy's answers.
    public func waitForLoads(timeout: Duration) -> Bool {
        let deadline = DispatchTime.now() + timeout.dispatchInterval
        while engine.withLock({ $0.isLoading() }) {
            let semaphore = DispatchSemaphore(value: 0)
            loadWaiters.withLock { $0.append(semaphore) }
            // Ended before the waiter was in place: nobody signals it.
            guard engine.withLock({ $0.isLoading() }) else { break }
            if semaphore.wait(timeout: deadline) == .timedOut {
                loadWaiters.withLock { $0.removeAll { $0 === semaphore } }
                return !engine.withLock { $0.isLoading() }
            }
        }
        return true
    }

    /// Wakes ``waitForLoads(timeout:)`` once no load is on its way.
    private func loadEnded() {
        guard !engine.withLock({ $0.isLoading() }) else { return }
        let waiting = loadWaiters.withLock { waiters in
            defer { waiters = [] }
            return waiters
        }
        for waiter in waiting { waiter.signal() }
    }

    /// Stops following `domain` (refused, `false`, while writes of it are pending).
    @discardableResult
    public func forget(_ domain: ClientDomain) -> Bool {
        run { $0.forget(domain) }
    }

    /// Loads every followed domain again.
    public func reloadAll() {
        run { $0.reloadAll() }
    }

    // MARK: Writing

    /// Writes (or removes, `nil`) keys of a persistent domain: laid over the cache at once,
    /// sent on the domain's lane. `false` when the engine refused (not loaded, forced key).
    @discardableResult
    public func write(_ changes: [(key: String, value: PropertyListValue?)], in domain: ClientDomain) -> Bool {
        run { $0.write(changes, in: domain) }
    }

    /// ``write(_:in:)``, returning the write's ticket (`nil`: refused): its outcome is told
    /// by ``ClientDriverEvent/writeEnded(_:tickets:failure:)`` quoting it.
    public func submit(_ changes: [(key: String, value: PropertyListValue?)], in domain: ClientDomain) -> UInt64? {
        run { $0.submit(changes, in: domain) }
    }

    /// Runs `body` with every lane's calls sent at once, none waiting for the flush
    /// interval (a caller waiting for the writes to be settled, as `synchronize()` does).
    public func flushingAtOnce<Result>(_ body: () -> Result) -> Result {
        urgent.add(1, ordering: .sequentiallyConsistent)
        defer { urgent.subtract(1, ordering: .sequentiallyConsistent) }
        run { $0.flushAll() }
        return body()
    }

    /// Sends the domain's next call now, or once the flush interval since its last call
    /// has passed (one timer per lane).
    private func flushSoon(_ domain: ClientDomain) {
        let now = ContinuousClock.now
        let wait = lanes.withLock { lanes -> Duration? in
            guard flushInterval > .zero, urgent.load(ordering: .sequentiallyConsistent) == 0,
                let last = lanes.lastSent[domain], now < last + flushInterval
            else {
                lanes.lastSent[domain] = now
                return nil
            }
            // A timer is armed already: it sends the call.
            guard lanes.waiting.insert(domain).inserted else { return .zero }
            return last + flushInterval - now
        }
        guard let wait else { return run { $0.flush(domain) } }
        guard wait > .zero else { return }
        DispatchQueue.global().asyncAfter(deadline: .now() + wait.dispatchInterval) { [weak self] in
            guard let self else { return }
            lanes.withLock { lanes in
                lanes.waiting.remove(domain)
                lanes.lastSent[domain] = .now
            }
            run { $0.flush(domain) }
        }
    }

    /// Replaces the whole domain (`nil`: removes it).
    @discardableResult
    public func replace(_ domain: ClientDomain, with values: [String: PropertyListValue]?) -> Bool {
        run { $0.replace(domain, with: values) }
    }

    /// ``replace(_:with:)``, returning the replacement's ticket (`nil`: refused): its
    /// outcome is told by ``ClientDriverEvent/writeEnded(_:tickets:failure:)`` quoting it.
    public func submitReplace(_ domain: ClientDomain, with values: [String: PropertyListValue]?) -> UInt64? {
        run { $0.submitReplace(domain, with: values) }
    }

    // MARK: Driving the engine

    /// Changes the engine, then carries out what it asked.
    private func run<Result>(_ change: (inout ClientEngine<PropertyListValue>) -> Result) -> Result {
        let (result, actions) = engine.withLock { engine in (change(&engine), engine.takeActions()) }
        performInOrder(actions)
        return result
    }

    /// Queues `actions` and drains the queue unless another thread is draining it.
    private func performInOrder(_ actions: [ClientAction<PropertyListValue>]) {
        guard !actions.isEmpty else { return }
        let drain = work.withLock { work -> Bool in
            work.pending.append(contentsOf: actions)
            defer { work.draining = true }
            return !work.draining
        }
        guard drain else { return }
        while let action = nextAction() { perform(action) }
    }

    private func nextAction() -> ClientAction<PropertyListValue>? {
        work.withLock { work in
            guard !work.pending.isEmpty else {
                work.draining = false
                return nil
            }
            return work.pending.removeFirst()
        }
    }

    private func perform(_ action: ClientAction<PropertyListValue>) {
        switch action {
        case .subscribe(let domain):
            subscribe(domain)
        case .unsubscribe(let domain):
            subscriptions.withLock { $0.removeValue(forKey: domain) }?.cancel()
        case .load(let domain, let token):
            load(domain, token: token)
        case .flushNeeded(let domain):
            flushSoon(domain)
        case .apply(let domain, let set, let remove, let token):
            send(PreferencesCall.apply(domain.name, set: set, remove: remove), domain, token)
        case .replace(let domain, let values, let token):
            switch (domain.isVolatile, values) {
            case (false, let values?): send(PreferencesCall.replaceDomain(domain.name, values), domain, token)
            case (false, nil): send(PreferencesCall.removeDomain(domain.name), domain, token)
            case (true, let values?): send(PreferencesCall.setVolatileDomain(domain.name, values), domain, token)
            case (true, nil): send(PreferencesCall.removeVolatileDomain(domain.name), domain, token)
            }
        case .loadFinished(let domain, let loaded):
            events(.loadFinished(domain, loaded: loaded))
            resumeWaiters(domain, loaded: loaded)
        case .changed(let domain, let keys, let byWrite):
            events(.changed(domain, keys: keys, byWrite: byWrite))
        case .forcedChanged(let domain, let keys):
            events(.forcedChanged(domain, keys: keys))
        case .writeFailed(let domain, let keys, let reason):
            events(.writeFailed(domain, keys: keys, reason: reason))
        case .writesSettled:
            events(.writesSettled)
        case .writeEnded(let domain, let tickets, let reason):
            let failure = reason.map { reason in
                failures.withLock { $0.removeValue(forKey: domain) } ?? .serviceUnavailable(reason)
            }
            events(.writeEnded(domain, tickets: tickets, failure: failure))
        }
    }

    /// Starts the domain's signals; the calls that put them in force are queued before
    /// this returns, so the load that follows is answered after them.
    private func subscribe(_ domain: ClientDomain) {
        do {
            let subscription = try proxy.startObserving([domain.name], resolving: false) { [weak self] event in
                self?.receive(event, about: domain)
            }
            subscriptions.withLock { $0[domain] = subscription }
        } catch {
            // The load that follows fails the same way and ends the domain unavailable.
        }
    }

    private func receive(_ event: PreferencesEvent, about domain: ClientDomain) {
        switch event {
        case .changed(let change) where !domain.isVolatile, .volatileChanged(let change) where domain.isVolatile:
            run {
                $0.changed(
                    domain, changed: change.changed, removed: change.removed, invalidated: change.invalidated,
                    serial: change.serial, sender: nil)
            }
        case .forcedKeysChanged(_, let keys, let serial) where !domain.isVolatile:
            run { $0.forcedKeysChanged(domain, keys: Set(keys), serial: serial, sender: nil) }
        case .ownerChanged(_, let current):
            run { $0.ownerChanged(to: current) }
        case .reloadNeeded:
            run { $0.reload(domain) }
        case .changed, .volatileChanged, .forcedKeysChanged, .disconnected:
            break
        }
    }

    /// Reads the domain whole: `ReadDomain` and `ForcedKeys` at once for a persistent
    /// domain, `ReadVolatileDomain` for a volatile one; the engine pairs the answers.
    private func load(_ domain: ClientDomain, token: UInt64) {
        loadsInFlight.withLock { $0[domain] = (token, nil) }
        let values =
            domain.isVolatile ? PreferencesCall.readVolatileDomain(domain.name) : PreferencesCall.readDomain(domain.name)
        proxy.answer(values) { [self] result in
            switch result {
            case .success(let answer):
                run { $0.domainRead(domain, token: token, values: answer.value, serial: answer.serial, sender: nil) }
            case .failure(let error):
                loadCallFailed(domain, token: token, part: .values, error)
            }
            loadPartAnswered(domain, token: token)
        }
        guard !domain.isVolatile else { return }
        proxy.answer(PreferencesCall.forcedKeys(domain.name)) { [self] result in
            switch result {
            case .success(let answer):
                run { $0.forcedKeysRead(domain, token: token, keys: Set(answer.value), serial: answer.serial) }
            case .failure(let error):
                loadCallFailed(domain, token: token, part: .forcedKeys, error)
            }
            loadPartAnswered(domain, token: token)
        }
    }

    private func loadCallFailed(_ domain: ClientDomain, token: UInt64, part: ClientLoadPart, _ error: PreferencesProxyError) {
        if error.failure?.isNotFound != true {
            loadsInFlight.withLock { loads in
                if loads[domain]?.token == token, loads[domain]?.error == nil { loads[domain]?.error = error }
            }
        }
        run { $0.loadCallFailed(domain, token: token, part: part, failure: error.failure, reason: error.description) }
    }

    /// A call of the load `token` was answered: once the domain's load has ended, its
    /// error (or none) is the domain's ``loadFailure(of:)``, and waiters of
    /// ``waitForLoads(timeout:)`` may go on.
    private func loadPartAnswered(_ domain: ClientDomain, token: UInt64) {
        guard !engine.withLock({ $0.isLoading(domain) }) else { return }
        let ended = loadsInFlight.withLock { loads -> (token: UInt64, error: PreferencesProxyError?)? in
            guard let load = loads[domain], load.token == token else { return nil }
            loads[domain] = nil
            return load
        }
        if let ended { loadFailures.withLock { $0[domain] = ended.error } }
        loadEnded()
    }

    /// Sends a write of the domain's lane and tells the engine its outcome.
    private func send(_ request: PreferencesRequest<Void>, _ domain: ClientDomain, _ token: UInt64) {
        proxy.answer(request) { [self] result in
            switch result {
            case .success(let answer):
                run { $0.writeAnswered(domain, token: token, serial: answer.serial, sender: nil) }
            case .failure(let error):
                failures.withLock { $0[domain] = error }
                run { $0.writeFailed(domain, token: token, failure: error.failure, reason: error.description) }
            }
        }
    }
}
