import Dispatch
import Synchronization

/// prefsd's signals (`Changed`, `VolatileChanged`, `ForcedKeysChanged`), per domain, as
/// an `AsyncSequence` or a callback.
///
/// Each domain's match rule (`arg0='DOMAIN'`) is added when its first subscriber comes
/// and removed when its last one goes. A signal is accepted only from the unique name
/// that owns `io.github.prefsd.Preferences1` (the proxy follows it with `GetNameOwner` and
/// `NameOwnerChanged`): any other peer can send a signal of the same shape, even to this
/// connection alone, and it is dropped. The keys a signal invalidated are re-read before
/// the change is handed on, so a ``DomainChange`` is always complete; a restart of prefsd
/// comes as ``PreferencesEvent/ownerChanged(previous:current:)``.
extension PreferencesProxy {
    /// The events about `domains` (every domain when `nil`), from now until the stream
    /// is dropped or the connection closes. Returns once the match rules are in force:
    /// every change committed after it returns is in the stream.
    /// - Throws: ``PreferencesProxyError/refused(_:)`` (`.invalidName`) for a domain name that breaks
    ///   the rules; ``PreferencesProxyError/serviceUnavailable(_:)`` when the bus is gone.
    /// - Parameters:
    ///   - domains: the domains followed; `nil` for every domain.
    ///   - resolving: false to get the signals as prefsd sent them, their
    ///     ``DomainChange/invalidated`` keys not re-read (for tests of the service itself).
    ///   - capacity: the most events the stream holds for its consumer (see below).
    ///
    /// The stream holds at most ``PreferencesEventQueue/defaultCapacity`` events (or
    /// `capacity`) that its consumer has not taken yet. A consumer that falls further
    /// behind loses the events queued and gets one ``PreferencesEvent/reloadNeeded(domain:reason:)``
    /// with a `nil` domain in their place (load every domain followed again); see
    /// ``PreferencesEventQueue``. prefsd's signals are never held back for a slow consumer,
    /// and the memory it takes stays bounded.
    public func events(
        in domains: [String]? = nil, resolving: Bool = true, capacity: Int = PreferencesEventQueue.defaultCapacity
    ) async throws(PreferencesProxyError) -> AsyncStream<PreferencesEvent> {
        let queue = PreferencesEventQueue(capacity: capacity)
        // Held weakly by the subscription: the stream owns the queue, and dropping it
        // ends the subscription.
        let identifier = try await subscribe(
            SignalRouter.Subscriber(
                domains: domains.map(Set.init), resolving: resolving,
                deliver: { [weak queue] in queue?.push($0) },
                finish: { [weak queue] in queue?.finish() }))
        let router = router
        queue.whenEnded { router.unsubscribe(identifier) }
        return queue.stream
    }

    /// Calls `handler` with each event about `domains` (every domain when `nil`), one at a
    /// time, in order, until the returned subscription is cancelled or released. The
    /// handler runs on the proxy's own serial queue: it must not block for long (and must not
    /// make a blocking call).
    /// - Parameters:
    ///   - domains: the domains followed; `nil` for every domain.
    ///   - resolving: false to get the signals as prefsd sent them, their
    ///     ``DomainChange/invalidated`` keys not re-read.
    ///   - handler: called with each event, on the proxy's serial queue.
    public func observe(
        _ domains: [String]? = nil, resolving: Bool = true, _ handler: @escaping @Sendable (PreferencesEvent) -> Void
    ) async throws(PreferencesProxyError) -> PreferencesSubscription {
        let identifier = try await subscribe(
            SignalRouter.Subscriber(
                domains: domains.map(Set.init), resolving: resolving, deliver: handler, finish: {}))
        return PreferencesSubscription(router: router, identifier: identifier)
    }

    /// ``observe(_:resolving:_:)`` for a caller that cannot suspend: blocks the calling
    /// thread until the match rules are in force. Its bus calls complete on the
    /// connection's own queue, so it never waits for Swift's concurrency threads; never
    /// call it from a subscription's handler.
    public func observeBlocking(
        _ domains: [String]? = nil, resolving: Bool = true, _ handler: @escaping @Sendable (PreferencesEvent) -> Void
    ) throws(PreferencesProxyError) -> PreferencesSubscription {
        let subscription = try startObserving(domains, resolving: resolving, handler)
        try subscription.confirmBlocking()
        return subscription
    }

    /// ``observeBlocking(_:resolving:_:)`` without its wait, to subscribe and read in one
    /// round trip: returns once the calls that put the subscription in force are queued,
    /// before any is answered. The bus handles a connection's messages in order, so a
    /// call made after this returns reaches it after them and is answered after them:
    /// once that answer has come, ``PreferencesSubscription/confirmBlocking()`` returns at
    /// once, and, when it does not throw, every change prefsd commits after that answer is
    /// delivered (its ``DomainChange/serial`` is higher than the answer's).
    /// - Throws: ``PreferencesProxyError/refused(_:)`` (`.invalidName`) for a domain name that breaks
    ///   the rules; ``PreferencesProxyError/serviceUnavailable(_:)`` when the proxy is closed.
    public func startObserving(
        _ domains: [String]? = nil, resolving: Bool = true, _ handler: @escaping @Sendable (PreferencesEvent) -> Void
    ) throws(PreferencesProxyError) -> PreferencesSubscription {
        let confirmation = SubscriptionConfirmation()
        let identifier = router.subscribe(
            SignalRouter.Subscriber(
                domains: domains.map(Set.init), resolving: resolving, deliver: handler, finish: {}
            )
        ) { result in confirmation.settle(result.map { _ in () }) }
        guard let identifier else {
            try confirmation.wait()
            throw .serviceUnavailable("the subscription failed without a reason")
        }
        return PreferencesSubscription(router: router, identifier: identifier, confirmation: confirmation)
    }

    private func subscribe(_ subscriber: SignalRouter.Subscriber) async throws(PreferencesProxyError) -> UInt64 {
        let router = router
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<UInt64, PreferencesProxyError>, Never>) in
            router.subscribe(subscriber) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Returns once every signal prefsd sent before a round trip made now has been handed
    /// to the subscribers (its invalidated keys re-read): a cache is then as new as prefsd.
    /// - Returns: false when prefsd did not answer the round trip.
    @discardableResult
    public func catchUp() async -> Bool {
        let router = router
        return await withCheckedContinuation { (done: CheckedContinuation<Bool, Never>) in router.catchUp { done.resume(returning: $0) } }
    }

    /// ``catchUp()`` for a caller that cannot suspend; never call it from a subscription's handler.
    @discardableResult
    public func catchUpBlocking() -> Bool {
        let done = DispatchSemaphore(value: 0)
        let answered = Atomic(false)
        router.catchUp { reply in
            answered.store(reply, ordering: .relaxed)
            done.signal()
        }
        done.wait()
        return answered.load(ordering: .relaxed)
    }

    /// Calls `work` on the proxy's delivery queue once every signal received so far has
    /// been handed to the subscribers. Called from the completion of a call (which runs on
    /// the connection's queue), `work` comes after the events of every signal prefsd sent
    /// before that answer: a cache that keeps a write's value until its answer drops it
    /// there, never before the signal brought it. `work` must not block.
    public func afterDelivered(_ work: @escaping @Sendable () -> Void) {
        router.afterDelivered(work)
    }

    /// The match rules the proxy has added, with how many subscriptions need each.
    public var matchRules: [String: Int] { router.ruleCounts }
}

/// A callback subscription of ``PreferencesProxy/observe(_:resolving:_:)``; cancelled when
/// ``cancel()`` is called or when it is released.
public final class PreferencesSubscription: Sendable {
    private let router: SignalRouter
    private let identifier: UInt64
    private let cancelled = Atomic(false)
    /// How the calls that put it in force were answered (`nil`: known to be in force).
    private let confirmation: SubscriptionConfirmation?

    init(router: SignalRouter, identifier: UInt64, confirmation: SubscriptionConfirmation? = nil) {
        self.router = router
        self.identifier = identifier
        self.confirmation = confirmation
    }

    deinit {
        cancel()
    }

    /// Stops the callbacks; the last subscription of a domain removes its match rule.
    public func cancel() {
        guard !cancelled.exchange(true, ordering: .relaxed) else { return }
        router.unsubscribe(identifier)
    }

    /// Returns once the subscription is in force (at once for one made by ``PreferencesProxy/observe(_:resolving:_:)``
    /// or ``PreferencesProxy/observeBlocking(_:resolving:_:)``, or once the bus has answered a
    /// call made after ``PreferencesProxy/startObserving(_:resolving:_:)``). Never call it
    /// from a subscription's handler or the connection's queue.
    /// - Throws: why it could not be put in force (it then delivers nothing more).
    public func confirmBlocking() throws(PreferencesProxyError) {
        try confirmation?.wait()
    }
}

/// The outcome of the calls that put a subscription in force, settled once, waited for
/// any number of times.
final class SubscriptionConfirmation: Sendable {
    private let outcome = Mutex<Result<Void, PreferencesProxyError>?>(nil)
    private let answered = DispatchSemaphore(value: 0)

    /// Records the outcome (the first one counts) and wakes the waiters.
    func settle(_ result: Result<Void, PreferencesProxyError>) {
        let first = outcome.withLock { outcome -> Bool in
            guard outcome == nil else { return false }
            outcome = result
            return true
        }
        if first { answered.signal() }
    }

    /// Blocks until the outcome is known; throws the failure.
    func wait() throws(PreferencesProxyError) {
        if let known = outcome.withLock({ $0 }) { return try known.get() }
        answered.wait()
        // Wakes the next waiter in turn.
        answered.signal()
        guard let known = outcome.withLock({ $0 }) else { return }
        try known.get()
    }
}
