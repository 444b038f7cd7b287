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
/// ordered inbox, read by one task that re-reads invalidated keys, so changes are never
/// reordered. Subscribing needs only the connection's queue (its bus calls complete
/// there), so a caller may wait for it while blocking its own thread.
final class SignalRouter: Sendable {
    private let connection: DBusConnection
    private let state = Mutex(State())
    private let inbox: AsyncStream<Inbound>.Continuation

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

        var rules: [String] {
            domains.map { $0.sorted().map(SignalRouter.rule(domain:)) } ?? [SignalRouter.rule(domain: nil)]
        }
    }

    /// The match rule for prefsd's signals about `domain` (every domain when `nil`).
    static func rule(domain: String?) -> String {
        if let domain { return PreferencesBus.domainMatchRule(domain: domain) }
        return "type='signal',sender='\(PreferencesBus.busName)',path='\(PreferencesBus.objectPath)',interface='\(PreferencesBus.interface)'"
    }

    private static let ownerRule =
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='\(PreferencesBus.busName)'"

    init(connection: DBusConnection) {
        self.connection = connection
        let (stream, inbox) = AsyncStream<Inbound>.makeStream()
        self.inbox = inbox
        connection.setSignalHandler { [weak self] message in self?.receive(message) }
        connection.setDisconnectHandler { inbox.yield(.disconnected) }
        Task { [weak self] in
            for await item in stream {
                guard let self else { return }
                await self.process(item)
            }
        }
    }

    /// Ends every subscription (each is told nothing more) and stops the inbox.
    func close() {
        for subscriber in takeAllSubscribers() { subscriber.finish() }
        inbox.finish()
    }

    private func takeAllSubscribers() -> [Subscriber] {
        state.withLock { state -> [Subscriber] in
            state.closed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
    }

    // MARK: Subscribing

    /// Adds a subscriber: follows the owner of prefsd's name first, then adds each of its
    /// match rules that no other subscriber holds, and calls `completion` once they are in
    /// force (on the connection's queue, or at once).
    func subscribe(_ subscriber: Subscriber, completion: @escaping @Sendable (Result<UInt64, PreferencesProxyError>) -> Void) {
        for domain in subscriber.domains ?? [] {
            do {
                _ = try DomainName(domain)
            } catch {
                return completion(.failure(.invalidName(error.description)))
            }
        }
        followOwner { [self] error in
            if let error { return completion(.failure(error)) }
            addRules(of: subscriber, completion: completion)
        }
    }

    private func addRules(of subscriber: Subscriber, completion: @escaping @Sendable (Result<UInt64, PreferencesProxyError>) -> Void) {
        let keys = subscriber.rules
        let pending = Mutex((left: keys.count, failure: PreferencesProxyError?.none))
        let registered = state.withLock { state -> UInt64? in
            guard !state.closed else { return nil }
            state.nextIdentifier += 1
            state.subscribers[state.nextIdentifier] = subscriber
            return state.nextIdentifier
        }
        guard let identifier = registered else {
            return completion(.failure(.serviceUnavailable("the connection to prefsd is closed")))
        }
        let ruleDone: Completion = { [self] error in
            let finished = pending.withLock { pending -> PreferencesProxyError?? in
                pending.left -= 1
                if pending.failure == nil { pending.failure = error }
                return pending.left == 0 ? .some(pending.failure) : .none
            }
            guard case .some(let failure) = finished else { return }
            if let failure {
                unsubscribe(identifier)
                completion(.failure(failure))
            } else {
                completion(.success(identifier))
            }
        }
        for key in keys {
            enum Step { case inForce, waiting, add }
            let step = state.withLock { state -> Step in
                var rule = state.rules[key] ?? Rule(count: 0, progress: .idle)
                rule.count += 1
                defer { state.rules[key] = rule }
                switch rule.progress {
                case .done:
                    return .inForce
                case .running(let waiters):
                    rule.progress = .running(waiters + [ruleDone])
                    return .waiting
                case .idle:
                    rule.progress = .running([ruleDone])
                    return .add
                }
            }
            switch step {
            case .inForce: ruleDone(nil)
            case .waiting: break
            case .add:
                busCall("AddMatch", key) { [self] error in
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
    }

    /// Removes a subscriber; a match rule no subscriber needs any more is removed.
    func unsubscribe(_ identifier: UInt64) {
        let unused = state.withLock { state -> [String] in
            guard let subscriber = state.subscribers.removeValue(forKey: identifier) else { return [] }
            var unused: [String] = []
            for key in subscriber.rules {
                state.rules[key]?.count -= 1
                if let rule = state.rules[key], rule.count <= 0 {
                    state.rules[key] = nil
                    if case .done = rule.progress { unused.append(key) }
                }
            }
            return unused
        }
        for rule in unused { busCall("RemoveMatch", rule) { _ in } }
    }

    /// The match rules in force or being added, with how many subscribers need each.
    var ruleCounts: [String: Int] {
        state.withLock { $0.rules.mapValues(\.count) }
    }

    /// Follows the owner of prefsd's name (once): adds the `NameOwnerChanged` rule, then
    /// asks `GetNameOwner`. The answer is applied on the connection's queue, like the
    /// owner changes; a change that libdbus dispatches after the answer although it came
    /// before is one the answer already reflects, and the last one always agrees with it.
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
        let finish: Completion = { [self] error in
            let waiters = state.withLock { state -> [Completion] in
                guard case .running(let waiters) = state.tracking else { return [] }
                state.tracking = error == nil ? .done : .idle
                return waiters
            }
            for waiter in waiters { waiter(error) }
        }
        busCall("AddMatch", Self.ownerRule) { [self] error in
            if let error { return finish(error) }
            connection.call(.methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", body: [.string(PreferencesBus.busName)]
            )) { [self] reply in
                let owner = (try? reply.get())?.body.first?.stringValue
                state.withLock { $0.owner = .known(owner) }
                finish(nil)
            }
        }
    }

    /// Calls a method of the bus driver taking one rule.
    private func busCall(_ member: String, _ rule: String, completion: @escaping Completion) {
        connection.call(.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: member, body: [.string(rule)]
        )) { result in
            switch result {
            case .success: completion(nil)
            case .failure(let error): completion(PreferencesProxyError(error))
            }
        }
    }

    // MARK: Receiving

    /// Judges a signal on the connection's queue, in the order signals arrive.
    private func receive(_ message: DBusMessage) {
        if message.sender == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
           message.body.count == 3, message.body[0] == .string(PreferencesBus.busName),
           case .string(let newOwner) = message.body[2] {
            let current = newOwner.isEmpty ? nil : newOwner
            let previous = state.withLock { state -> Owner in
                defer { state.owner = .known(current) }
                return state.owner
            }
            if case .known(let before) = previous, before != current {
                inbox.yield(.event(.ownerChanged(previous: before, current: current)))
            }
            return
        }
        // Only the owner of prefsd's name speaks for prefsd: a signal of the same shape
        // from any other peer (broadcast or sent to us alone) is dropped.
        let owner = state.withLock { $0.owner }
        guard case .known(let name?) = owner, message.sender == name, let signal = ServiceSignal(message) else { return }
        inbox.yield(.signal(signal))
    }

    private func process(_ item: Inbound) async {
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
            guard signal.needsResolving else { return deliver(raw) }
            let (asIs, resolving) = state.withLock { state in
                let wanting = state.subscribers.values.filter { $0.wants(raw) }
                return (wanting.filter { !$0.resolving }, wanting.filter(\.resolving))
            }
            for subscriber in asIs { subscriber.deliver(raw) }
            guard !resolving.isEmpty else { return }
            let resolved = await resolve(signal)
            for subscriber in resolving { subscriber.deliver(resolved) }
        }
    }

    private func deliver(_ event: PreferencesEvent) {
        let subscribers = state.withLock { $0.subscribers.values.filter { $0.wants(event) } }
        for subscriber in subscribers { subscriber.deliver(event) }
    }
    /// The event for a signal, with the keys it invalidated re-read: each key with `Read`
    /// (a persistent domain), or the whole domain with `ReadDomain` / `ReadVolatileDomain`
    /// when it invalidated `""` or is volatile (there is no `Read` of a volatile key).
    private func resolve(_ signal: ServiceSignal) async -> PreferencesEvent {
        switch signal {
        case .forcedKeys:
            return signal.rawEvent
        case .changed(var change, let volatile):
            let wrap: (DomainChange) -> PreferencesEvent = volatile ? { .volatileChanged($0) } : { .changed($0) }
            let invalidated = change.invalidated
            guard !invalidated.isEmpty else { return wrap(change) }
            do throws(PreferencesProxyError) {
                if volatile || invalidated.contains("") {
                    let whole = try await readWhole(change.domain, volatile: volatile)
                    if invalidated.contains("") {
                        change.changed = whole
                        change.removed = []
                        change.isWholeDomain = true
                    } else {
                        for key in invalidated {
                            if let value = whole[key] { change.changed[key] = value } else { change.removed.append(key) }
                        }
                    }
                } else {
                    for key in invalidated {
                        do {
                            change.changed[key] = try await PreferencesProxy.perform(
                                PreferencesCall.read(change.domain, key), on: connection, timeout: PreferencesProxy.defaultTimeout)
                        } catch .notFound {
                            change.removed.append(key)
                        }
                    }
                }
                return wrap(change)
            } catch {
                return .reloadNeeded(domain: change.domain, reason: "could not re-read what a change of \(change.domain) left out: \(error.description)")
            }
        }
    }

    private func readWhole(_ domain: String, volatile: Bool) async throws(PreferencesProxyError) -> [String: PropertyListValue] {
        let request = volatile ? PreferencesCall.readVolatileDomain(domain) : PreferencesCall.readDomain(domain)
        do {
            return try await PreferencesProxy.perform(request, on: connection, timeout: PreferencesProxy.defaultTimeout)
        } catch .notFound {
            return [:]
        }
    }
}
