import DBus
import PreferencesModel
import PreferencesProtocol
import Dispatch
import Synchronization

/// Receives the signals of one connection, keeps the match rules and the owner of
/// prefsd's name, and hands each accepted signal, complete, to the subscribers of its
/// domain, in the order they arrived.
///
/// The owner is judged on the connection's queue, where signals arrive in order: a
/// `NameOwnerChanged` updates it there, and each of prefsd's signals is accepted or
/// dropped there against the owner of that moment. What is accepted goes through one
/// ordered inbox, drained on the router's own serial queue, which holds the next item
/// back while it re-reads a change's invalidated keys, so changes are never reordered.
/// Neither subscribing nor delivering needs Swift's concurrency threads (bus calls
/// complete on the connection's queue), so a caller may wait for them while blocking its
/// own thread.
final class SignalRouter: Sendable {
    private let connection: DBusConnection
    private let state = Mutex(State())
    private let inbox = Mutex(Inbox())
    /// Held while a subscriber's calls are queued (see ``subscribe(_:completion:)``).
    private let queueing = Mutex(())
    private let deliveryQueue = DispatchQueue(label: "PreferencesProxy.delivery")

    /// What the inbox carries: what to deliver, in order.
    private enum Inbound: Sendable {
        case signal(ServiceSignal)
        case event(PreferencesEvent)
        case disconnected
        /// Called when every item before it has been delivered.
        case barrier(@Sendable () -> Void)
    }

    private struct Inbox: Sendable {
        var items: [Inbound] = []
        var next = 0
        /// The delivery queue is draining (or waiting on a re-read).
        var busy = false
        var closed = false
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
        connection.setSignalHandler { [weak self] message in self?.receive(message) }
        connection.setDisconnectHandler { [weak self] in self?.enqueue(.disconnected) }
    }

    /// Ends every subscription (each is told nothing more) and stops the inbox.
    func close() {
        for subscriber in takeAllSubscribers() { subscriber.finish() }
        let barriers = inbox.withLock { inbox -> [@Sendable () -> Void] in
            inbox.closed = true
            // Idempotent (the proxy's deinit closes again): what is left is what follows
            // `next`, none at all once the inbox has been emptied.
            let left = inbox.items.dropFirst(inbox.next)
            inbox.items = []
            inbox.next = 0
            return left.compactMap { if case .barrier(let done) = $0 { done } else { nil } }
        }
        for done in barriers { done() }
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
                completion(.failure(.invalidName(error.description)))
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
                enqueue(.event(.ownerChanged(previous: before, current: current)))
            }
            return
        }
        // Only the owner of prefsd's name speaks for prefsd: a signal of the same shape
        // from any other peer (broadcast or sent to us alone) is dropped.
        let owner = state.withLock { $0.owner }
        guard case .known(let name?) = owner, message.sender == name, let signal = ServiceSignal(message) else { return }
        enqueue(.signal(signal))
    }

    /// Calls `done` once every signal received before prefsd answered a `Ping` sent now
    /// has been delivered (at once when the connection is closed), with whether prefsd
    /// answered.
    func catchUp(_ done: @escaping @Sendable (Bool) -> Void) {
        // To the connection whose signals we follow: the door inside a sandbox.
        connection.call(.methodCall(
            destination: Self.endpoint.busName, path: PreferencesBus.objectPath,
            interface: StandardInterface.peer, member: "Ping"
        )) { [weak self] reply in
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
        enqueue(.barrier(done))
    }

    private func enqueue(_ item: Inbound) {
        let start = inbox.withLock { inbox -> Bool? in
            guard !inbox.closed else { return nil }
            inbox.items.append(item)
            defer { inbox.busy = true }
            return !inbox.busy
        }
        switch start {
        case nil: if case .barrier(let done) = item { done() }
        case true?: deliveryQueue.async { [self] in drain() }
        case false?: break
        }
    }

    /// The next item of the inbox, or `nil` (and not busy any more) when it is empty.
    private func takeNext() -> Inbound? {
        inbox.withLock { inbox in
            guard inbox.next < inbox.items.count else {
                inbox.items = []
                inbox.next = 0
                inbox.busy = false
                return nil
            }
            defer { inbox.next += 1 }
            return inbox.items[inbox.next]
        }
    }

    /// Delivers the inbox in order, on the delivery queue; stops while a change's
    /// invalidated keys are re-read and goes on once they are.
    private func drain() {
        while let item = takeNext() {
            switch item {
            case .event(let event):
                deliver(event)
            case .barrier(let done):
                done()
            case .disconnected:
                for subscriber in takeAllSubscribers() {
                    subscriber.deliver(.disconnected)
                    subscriber.finish()
                }
            case .signal(let signal):
                let raw = signal.rawEvent
                guard signal.needsResolving else {
                    deliver(raw)
                    continue
                }
                let (asIs, resolving) = state.withLock { state in
                    let wanting = state.subscribers.values.filter { $0.wants(raw) }
                    return (wanting.filter { !$0.resolving }, wanting.filter(\.resolving))
                }
                for subscriber in asIs { subscriber.deliver(raw) }
                guard !resolving.isEmpty else { continue }
                resolve(signal) { [self] resolved in
                    deliveryQueue.async { [self] in
                        for subscriber in resolving { subscriber.deliver(resolved) }
                        drain()
                    }
                }
                return
            }
        }
    }

    private func deliver(_ event: PreferencesEvent) {
        let subscribers = state.withLock { $0.subscribers.values.filter { $0.wants(event) } }
        for subscriber in subscribers { subscriber.deliver(event) }
    }

    /// The event for a signal, with the keys it invalidated re-read: each key with `Read`
    /// (a persistent domain), or the whole domain with `ReadDomain` / `ReadVolatileDomain`
    /// when it invalidated `""` or is volatile (there is no `Read` of a volatile key).
    private func resolve(_ signal: ServiceSignal, completion: @escaping @Sendable (PreferencesEvent) -> Void) {
        guard case .changed(let change, let volatile) = signal, !change.invalidated.isEmpty else {
            return completion(signal.rawEvent)
        }
        let wrap: @Sendable (DomainChange) -> PreferencesEvent = { change in
            volatile ? PreferencesEvent.volatileChanged(change) : PreferencesEvent.changed(change)
        }
        let failed: @Sendable (PreferencesProxyError) -> Void = { error in
            completion(.reloadNeeded(domain: change.domain, reason: "could not re-read what a change of \(change.domain) left out: \(error.description)"))
        }
        let invalidated = change.invalidated
        if volatile || invalidated.contains("") {
            let request = volatile ? PreferencesCall.readVolatileDomain(change.domain) : PreferencesCall.readDomain(change.domain)
            return perform(request) { result in
                var complete = change
                switch result {
                case .failure(.notFound):
                    complete.changed = [:]
                case .failure(let error):
                    return failed(error)
                case .success(let whole):
                    complete.changed = whole
                }
                if invalidated.contains("") {
                    complete.removed = []
                    complete.isWholeDomain = true
                } else {
                    let whole = complete.changed
                    complete.changed = change.changed
                    for key in invalidated {
                        if let value = whole[key] { complete.changed[key] = value } else { complete.removed.append(key) }
                    }
                }
                completion(wrap(complete))
            }
        }
        // One Read per key, all at once; the change is handed on when the last answers.
        let answers = Mutex((left: invalidated.count, values: [String: PropertyListValue](), failure: PreferencesProxyError?.none))
        for key in invalidated {
            perform(PreferencesCall.read(change.domain, key)) { result in
                let finished = answers.withLock { answers -> Bool in
                    switch result {
                    case .success(let value): answers.values[key] = value
                    case .failure(.notFound): break
                    case .failure(let error): if answers.failure == nil { answers.failure = error }
                    }
                    answers.left -= 1
                    return answers.left == 0
                }
                guard finished else { return }
                let (values, failure) = answers.withLock { ($0.values, $0.failure) }
                if let failure { return failed(failure) }
                var complete = change
                for key in invalidated {
                    if let value = values[key] { complete.changed[key] = value } else { complete.removed.append(key) }
                }
                completion(wrap(complete))
            }
        }
    }

    private func perform<Reply>(_ request: PreferencesRequest<Reply>, completion: @escaping @Sendable (Result<Reply, PreferencesProxyError>) -> Void) {
        PreferencesProxy.perform(request, on: connection, timeout: PreferencesProxy.defaultTimeout, completion: completion)
    }
}
