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
    /// - Throws: ``PreferencesProxyError/invalidName(_:)`` for a domain name that breaks
    ///   the rules; ``PreferencesProxyError/serviceUnavailable(_:)`` when the bus is gone.
    /// - Parameter resolving: false to get the signals as prefsd sent them, their
    ///   ``DomainChange/invalidated`` keys not re-read (for tests of the service itself).
    public func events(in domains: [String]? = nil, resolving: Bool = true) async throws(PreferencesProxyError) -> AsyncStream<PreferencesEvent> {
        let (stream, continuation) = AsyncStream<PreferencesEvent>.makeStream()
        let identifier = try await subscribe(SignalRouter.Subscriber(
            domains: domains.map(Set.init), resolving: resolving,
            deliver: { continuation.yield($0) },
            finish: { continuation.finish() }))
        let router = router
        continuation.onTermination = { _ in router.unsubscribe(identifier) }
        return stream
    }

    /// Calls `handler` with each event about `domains` (every domain when `nil`), one at a
    /// time, in order, until the returned subscription is cancelled or released. The
    /// handler runs on the proxy's own serial queue: it must not block for long (and must not
    /// make a blocking call).
    /// - Parameter resolving: false to get the signals as prefsd sent them, their
    ///   ``DomainChange/invalidated`` keys not re-read.
    public func observe(
        _ domains: [String]? = nil, resolving: Bool = true, _ handler: @escaping @Sendable (PreferencesEvent) -> Void
    ) async throws(PreferencesProxyError) -> PreferencesSubscription {
        let identifier = try await subscribe(SignalRouter.Subscriber(
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
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<UInt64, PreferencesProxyError>?>(nil)
        router.subscribe(SignalRouter.Subscriber(
            domains: domains.map(Set.init), resolving: resolving, deliver: handler, finish: {}
        )) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        let identifier = try (outcome.withLock { $0 } ?? .failure(.serviceUnavailable("the subscription was not answered"))).get()
        return PreferencesSubscription(router: router, identifier: identifier)
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
    public func catchUp() async {
        let router = router
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in router.catchUp { done.resume() } }
    }

    /// ``catchUp()`` for a caller that cannot suspend; never call it from a subscription's handler.
    public func catchUpBlocking() {
        let done = DispatchSemaphore(value: 0)
        router.catchUp { done.signal() }
        done.wait()
    }

    /// The match rules the proxy has added, with how many subscriptions need each.
    public var matchRules: [String: Int] { router.ruleCounts }
}

/// A callback subscription of ``PreferencesProxy/observe(_:_:)``; cancelled when
/// ``cancel()`` is called or when it is released.
public final class PreferencesSubscription: Sendable {
    private let router: SignalRouter
    private let identifier: UInt64
    private let cancelled = Atomic(false)

    init(router: SignalRouter, identifier: UInt64) {
        self.router = router
        self.identifier = identifier
    }

    deinit {
        cancel()
    }

    /// Stops the callbacks; the last subscription of a domain removes its match rule.
    public func cancel() {
        guard !cancelled.exchange(true, ordering: .relaxed) else { return }
        router.unsubscribe(identifier)
    }
}
