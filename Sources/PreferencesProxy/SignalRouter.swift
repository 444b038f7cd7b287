import DBus
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// Receives the signals of one connection, keeps the match rules and the owner of
/// prefsd's name, and hands each accepted signal, complete, to the subscribers of its
/// domain, in the order they arrived.
///
/// The owner is judged on the connection's queue, where signals arrive in order: a
/// `NameOwnerChanged` updates it there, and each of prefsd's signals is accepted or
/// dropped there against the owner of that moment. What is accepted goes through one
/// ordered inbox (``SignalInbox``), which holds the next item back while a change's
/// invalidated keys are re-read (``resolve(_:completion:)``), so changes are never
/// reordered. Neither subscribing nor delivering needs Swift's concurrency threads (bus
/// calls complete on the connection's queue), so a caller may wait for them while
/// blocking its own thread.
final class SignalRouter: Sendable {
    let connection: DBusConnection
    private let state = Mutex(State())
    private let inbox = SignalInbox<Inbound>(label: "PreferencesProxy.delivery")
    /// Held while a subscriber's calls are queued (see ``subscribe(_:completion:)``).
    private let queueing = Mutex(())

    /// What the inbox carries: what to deliver, in order.
    private enum Inbound: Sendable {
        case signal(ServiceSignal)
        case event(PreferencesEvent)
        case disconnected
    }

    /// Called once with the outcome of a bus call the router waits on.
    typealias Completion = @Sendable (PreferencesProxyError?) -> Void

    private struct State: Sendable {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextIdentifier: UInt64 = 0
        /// Match rules, with how many subscribers need each.
        var rules: [String: Rule] = [:]
        /// Following the owner: started by the first subscriber.
        var tracking: Progress = .idle
        /// The unique name owning prefsd's bus name; `.unknown` before the answer of `GetNameOwner`.
        var owner: Owner = .unknown
        var closed = false
    }

    private enum Owner: Sendable, Equatable {
        case unknown
        case known(String?)
    }

    /// A bus call that many may wait on.
    private enum Progress: Sendable {
        case idle
        case running([Completion])
        case done
    }

    private struct Rule: Sendable {
        var count: Int
        var progress: Progress
    }

    struct Subscriber: Sendable {
        /// The domains it follows; `nil` for every domain.
        let domains: Set<String>?
        /// Whether it wants invalidated keys re-read (else the signals as they came).
        let resolving: Bool
        let deliver: @Sendable (PreferencesEvent) -> Void
        let finish: @Sendable () -> Void

        func wants(_ event: PreferencesEvent) -> Bool {
            guard let domains, let domain = event.domain else { return true }
            return domains.contains(domain)
        }

        /// The domains whose signals it needs (`nil`: every domain).
        var followed: [String?] {
            domains.map { $0.sorted() } ?? [nil]
        }
    }

    /// The match rule for prefsd's signals about `domain` (every domain when `nil`).
    static func rule(domain: String?) -> String {
        endpoint.rule(domain: domain)
    }

    /// Where prefsd is: the main name, or the sandbox door inside Flatpak.
    private static let endpoint = PreferencesEndpoint.current

    private static let ownerRule = endpoint.ownerRule

    init(connection: DBusConnection) {
        self.connection = connection
        inbox.setHandler { [weak self] item, resume in self?.handle(item, resume) ?? .next }
        connection.setSignalHandler { [weak self] message in self?.receive(message) }
        connection.setDisconnectHandler { [weak self] in self?.inbox.put(.disconnected) }
    }

    /// Ends every subscription (each is told nothing more) and stops the inbox.
    func close() {
        for subscriber in takeAllSubscribers() { subscriber.finish() }
        inbox.close()
    }

    private func takeAllSubscribers() -> [Subscriber] {
        state.withLock { state -> [Subscriber] in
            state.closed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
    }

    // MARK: Subscribing

    /// Adds a subscriber and queues, before returning, every call it still needs: following
    /// the owner of prefsd's name (unless followed already) and adding each of its match
    /// rules that no other subscriber holds. None of these calls waits for another: the
    /// bus handles one connection's messages in order, so the owner's rule is in force
    /// before `GetNameOwner` is answered, and the domains' rules after it. `completion` is
    /// called once, when every one of them is answered (on the connection's queue, or at
    /// once): with the identifier, or with the failure (the subscriber then removed).
    /// - Returns: the identifier (its calls, and those of any other subscriber it waits
    ///   on, are queued: a call queued after this returns reaches the bus after them), or
    ///   `nil` when it failed at once (`completion` was called with why).
    @discardableResult
    func subscribe(_ subscriber: Subscriber, completion: @escaping @Sendable (Result<UInt64, PreferencesProxyError>) -> Void) -> UInt64? {
        for domain in subscriber.domains ?? [] {
            do {
                _ = try DomainName(domain)
            } catch {
                completion(.failure(PreferencesProxyError(.invalidName(error.description))))
                return nil
            }
        }
        // Held while the calls are queued (not sent: queueing never blocks), so a subscriber
        // that finds a call in progress finds it queued already.
        return queueing.withLock { _ -> UInt64? in
            let registered = state.withLock { state -> UInt64? in
                guard !state.closed else { return nil }
                state.nextIdentifier += 1
                state.subscribers[state.nextIdentifier] = subscriber
                return state.nextIdentifier
            }
            guard let identifier = registered else {
                completion(.failure(.serviceUnavailable("the connection to prefsd is closed")))
                return nil
            }
            let followed = subscriber.followed
            // The owner, then each rule; the subscriber is in force when all have answered.
            let answered = Self.gather(1 + followed.count) { [self] failure in
                if let failure {
                    unsubscribe(identifier)
                    completion(.failure(failure))
                } else {
                    completion(.success(identifier))
                }
            }
            followOwner(answered)
            for domain in followed { addRule(domain, answered) }
            return identifier
        }
    }

    /// A completion to be called `count` times; on the last call, `completion` gets the
    /// first failure among them (or `nil`).
    private static func gather(_ count: Int, _ completion: @escaping Completion) -> Completion {
        let left = Mutex((count: count, failure: PreferencesProxyError?.none))
        return { error in
            let finished = left.withLock { left -> PreferencesProxyError?? in
                left.count -= 1
                if left.failure == nil { left.failure = error }
                return left.count == 0 ? .some(left.failure) : .none
            }
            if case .some(let failure) = finished { completion(failure) }
        }
    }

    /// Adds the match rule of `domain` unless it is in force or being added; `completion`
    /// runs once it is in force (or could not be).
    private func addRule(_ domain: String?, _ completion: @escaping Completion) {
        let key = Self.rule(domain: domain)
        enum Step { case inForce, waiting, add }
        let step = state.withLock { state -> Step in
            var rule = state.rules[key] ?? Rule(count: 0, progress: .idle)
            rule.count += 1
            defer { state.rules[key] = rule }
            switch rule.progress {
            case .done:
                return .inForce
            case .running(let waiters):
                rule.progress = .running(waiters + [completion])
                return .waiting
            case .idle:
                rule.progress = .running([completion])
                return .add
            }
        }
        switch step {
        case .inForce: completion(nil)
        case .waiting: break
        case .add:
            // A match rule, or a subscription at the sandbox door inside Flatpak.
            call(Self.endpoint.followCall(domain: domain)) { [self] error in
                let waiters = state.withLock { state -> [Completion] in
                    guard var rule = state.rules[key], case .running(let waiters) = rule.progress else { return [] }
                    rule.progress = error == nil ? .done : .idle
                    state.rules[key] = rule
                    return waiters
                }
                for waiter in waiters { waiter(error) }
            }
        }
    }

    /// Removes a subscriber; a match rule no subscriber needs any more is removed.
    func unsubscribe(_ identifier: UInt64) {
        let unused = state.withLock { state -> [String?] in
            guard let subscriber = state.subscribers.removeValue(forKey: identifier) else { return [] }
            var unused: [String?] = []
            for domain in subscriber.followed {
                let key = Self.rule(domain: domain)
                state.rules[key]?.count -= 1
                if let rule = state.rules[key], rule.count <= 0 {
                    state.rules[key] = nil
                    if case .done = rule.progress { unused.append(domain) }
                }
            }
            return unused
        }
        for domain in unused { call(Self.endpoint.unfollowCall(domain: domain)) { _ in } }
    }

    /// The match rules in force or being added, with how many subscribers need each.
    var ruleCounts: [String: Int] {
        state.withLock { $0.rules.mapValues(\.count) }
    }

    /// Follows the owner of prefsd's name (once): adds the `NameOwnerChanged` rule and
    /// asks `GetNameOwner`, both at once (the bus puts the rule in force before it answers
    /// the question). The answer is applied on the connection's queue, like the owner
    /// changes; a change that libdbus dispatches after the answer although it came before
    /// is one the answer already reflects, and the last one always agrees with it.
    private func followOwner(_ completion: @escaping Completion) {
        let start = state.withLock { state -> Bool? in
            switch state.tracking {
            case .done: return nil
            case .running(let waiters):
                state.tracking = .running(waiters + [completion])
                return false
            case .idle:
                state.tracking = .running([completion])
                return true
            }
        }
        guard let start else { return completion(nil) }
        guard start else { return }
        let finish = Self.gather(2) { [self] error in
            let waiters = state.withLock { state -> [Completion] in
                guard case .running(let waiters) = state.tracking else { return [] }
                state.tracking = error == nil ? .done : .idle
                return waiters
            }
            for waiter in waiters { waiter(error) }
        }
        connection.addMatch(Self.ownerRule) { result in
            switch result {
            case .success: finish(nil)
            case .failure(let error): finish(PreferencesProxyError(error))
            }
        }
        connection.getNameOwner(Self.endpoint.busName) { [self] reply in
            // No owner (NameHasNoOwner) or no answer: nobody speaks for prefsd yet.
            let owner = try? reply.get()
            state.withLock { $0.owner = .known(owner) }
            finish(nil)
        }
    }

    /// Sends a call whose answer carries nothing but success or failure.
    private func call(_ message: DBusMessage, completion: @escaping Completion) {
        connection.call(message) { result in
            switch result {
            case .success: completion(nil)
            case .failure(let error): completion(PreferencesProxyError(error))
            }
        }
    }

    // MARK: Receiving

    /// Judges a signal on the connection's queue, in the order signals arrive.
    private func receive(_ message: DBusMessage) {
        if let change = BusDriver.ownerChange(message) {
            guard change.name == Self.endpoint.busName else { return }
            let current = change.newOwner.isEmpty ? nil : change.newOwner
            let previous = state.withLock { state -> Owner in
                defer { state.owner = .known(current) }
                return state.owner
            }
            if case .known(let before) = previous, before != current {
                inbox.put(.event(.ownerChanged(previous: before, current: current)))
            }
            return
        }
        // Only the owner of prefsd's name speaks for prefsd: a signal of the same shape
        // from any other peer (broadcast or sent to us alone) is dropped.
        let owner = state.withLock { $0.owner }
        guard case .known(let name?) = owner, message.sender == name, let signal = ServiceSignal(message) else { return }
        inbox.put(.signal(signal))
    }

    /// Calls `done` once every signal received before prefsd answered a `Ping` sent now
    /// has been delivered (at once when the connection is closed), with whether prefsd
    /// answered.
    func catchUp(_ done: @escaping @Sendable (Bool) -> Void) {
        // To the connection whose signals we follow: the door inside a sandbox.
        connection.call(
            .methodCall(
                destination: Self.endpoint.busName, path: PreferencesBus.objectPath,
                interface: StandardInterface.peer, member: "Ping"
            )
        ) { [weak self] reply in
            let answered = (try? reply.get()) != nil
            // Answers and signals are dispatched on the connection's queue in the order
            // they came: every signal before this answer is in the inbox already.
            guard let self else { return done(answered) }
            afterDelivered { done(answered) }
        }
    }

    /// Calls `done` on the delivery queue once every signal received so far has been
    /// delivered (at once when the connection is closed).
    func afterDelivered(_ done: @escaping @Sendable () -> Void) {
        inbox.afterHandled(done)
    }

    /// Delivers one item of the inbox, on its queue; holds the next back while a change's
    /// invalidated keys are re-read.
    private func handle(
        _ item: Inbound, _ resume: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void
    ) -> SignalInbox<Inbound>.Step {
        switch item {
        case .event(let event):
            deliver(event)
        case .disconnected:
            for subscriber in takeAllSubscribers() {
                subscriber.deliver(.disconnected)
                subscriber.finish()
            }
        case .signal(let signal):
            let raw = signal.rawEvent
            guard signal.needsResolving else {
                deliver(raw)
                return .next
            }
            let (asIs, resolving) = state.withLock { state in
                let wanting = state.subscribers.values.filter { $0.wants(raw) }
                return (wanting.filter { !$0.resolving }, wanting.filter(\.resolving))
            }
            for subscriber in asIs { subscriber.deliver(raw) }
            guard !resolving.isEmpty else { return .next }
            resolve(signal) { resolved in
                resume { for subscriber in resolving { subscriber.deliver(resolved) } }
            }
            return .held
        }
        return .next
    }

    private func deliver(_ event: PreferencesEvent) {
        let subscribers = state.withLock { $0.subscribers.values.filter { $0.wants(event) } }
        for subscriber in subscribers { subscriber.deliver(event) }
    }
}
