import DBus
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// Receives the signals of one connection, keeps the match rules and the owner of
/// prefsd's name, and hands each accepted signal, complete, to the subscribers of its
/// domain, in the order they arrived.
///
/// Everything the connection receives (signals, and the answer to `GetNameOwner`) goes
/// through one ordered inbox, read by one task: so an owner change and the signals around
/// it are judged in the order the bus sent them, and the re-reads of invalidated keys
/// never reorder changes.
final class SignalRouter: Sendable {
    private let connection: DBusConnection
    private let state = Mutex(State())
    private let inbox: AsyncStream<Inbound>.Continuation

    /// What the inbox carries.
    private enum Inbound: Sendable {
        case message(DBusMessage)
        /// The answer of `GetNameOwner`, and whom to wake once it is applied.
        case ownerAnswer(String?, CheckedContinuation<Void, Never>)
        case disconnected
    }

    private struct State: Sendable {
        var subscribers: [UInt64: Subscriber] = [:]
        var nextIdentifier: UInt64 = 0
        /// Match rules added, with how many subscribers need each.
        var rules: [String: Rule] = [:]
        /// Following the owner: started once, by the first subscriber.
        var tracking: Task<Result<Void, PreferencesProxyError>, Never>?
        /// The unique name owning prefsd's bus name; `.none` while unknown.
        var owner: Owner = .unknown
        var closed = false
    }

    private enum Owner: Sendable, Equatable {
        case unknown
        case known(String?)
    }

    private struct Rule: Sendable {
        var count: Int
        /// The domain it follows; `nil` for every domain.
        let domain: String?
        let added: Task<Result<Void, PreferencesProxyError>, Never>
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
    }

    /// Where prefsd is: the main name, or the sandbox door inside Flatpak.
    private static let endpoint = PreferencesEndpoint.current

    /// The match rule for prefsd's signals about `domain` (every domain when `nil`).
    static func rule(domain: String?) -> String {
        endpoint.rule(domain: domain)
    }

    private static let ownerRule = endpoint.ownerRule

    init(connection: DBusConnection) {
        self.connection = connection
        let (stream, inbox) = AsyncStream<Inbound>.makeStream()
        self.inbox = inbox
        connection.setSignalHandler { message in inbox.yield(.message(message)) }
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
        let subscribers = state.withLock { state -> [Subscriber] in
            state.closed = true
            defer { state.subscribers = [:] }
            return Array(state.subscribers.values)
        }
        for subscriber in subscribers { subscriber.finish() }
        inbox.finish()
    }

    // MARK: Subscribing

    /// Adds a subscriber for `domains` (every domain when `nil`): follows the owner of
    /// prefsd's name first, then adds each domain's match rule unless another subscriber
    /// did. Returns once the rules are in force.
    func subscribe(_ subscriber: Subscriber) async throws(PreferencesProxyError) -> UInt64 {
        for domain in subscriber.domains ?? [] {
            do {
                _ = try DomainName(domain)
            } catch {
                throw .invalidName(error.description)
            }
        }
        try await followOwner()
        let domains: [String?] = subscriber.domains.map { $0.sorted() } ?? [nil]
        let (identifier, waits) = try state.withLock { state throws(PreferencesProxyError) -> (UInt64, [Task<Result<Void, PreferencesProxyError>, Never>]) in
            guard !state.closed else { throw .serviceUnavailable("the proxy is closed") }
            state.nextIdentifier += 1
            state.subscribers[state.nextIdentifier] = subscriber
            var waits: [Task<Result<Void, PreferencesProxyError>, Never>] = []
            for domain in domains {
                let key = Self.rule(domain: domain)
                if state.rules[key] == nil {
                    let connection = connection
                    state.rules[key] = Rule(count: 0, domain: domain, added: Task {
                        do throws(DBusError) {
                            _ = try await connection.call(Self.endpoint.followCall(domain: domain))
                            return .success(())
                        } catch {
                            return .failure(PreferencesProxyError(error))
                        }
                    })
                }
                state.rules[key]?.count += 1
                if let added = state.rules[key]?.added { waits.append(added) }
            }
            return (state.nextIdentifier, waits)
        }
        for wait in waits {
            if case .failure(let error) = await wait.value {
                unsubscribe(identifier)
                throw error
            }
        }
        return identifier
    }

    /// Removes a subscriber; a match rule no subscriber needs any more is removed.
    func unsubscribe(_ identifier: UInt64) {
        let unused = state.withLock { state -> [String?] in
            guard let subscriber = state.subscribers.removeValue(forKey: identifier) else { return [] }
            let keys = subscriber.domains.map { $0.map(Self.rule(domain:)) } ?? [Self.rule(domain: nil)]
            var unused: [String?] = []
            for key in keys {
                state.rules[key]?.count -= 1
                if state.rules[key]?.count == 0 {
                    unused.append(state.rules[key]?.domain)
                    state.rules[key] = nil
                }
            }
            return unused
        }
        for domain in unused {
            connection.call(Self.endpoint.unfollowCall(domain: domain)) { _ in }
        }
    }

    /// The match rules in force, with how many subscribers need each (for tests).
    var ruleCounts: [String: Int] {
        state.withLock { $0.rules.mapValues(\.count) }
    }

    /// Starts following the owner of prefsd's name once: adds the `NameOwnerChanged` rule,
    /// then asks `GetNameOwner`, whose answer goes through the inbox so that it is ordered
    /// with the owner changes around it.
    private func followOwner() async throws(PreferencesProxyError) {
        let tracking = state.withLock { state in
            if let tracking = state.tracking { return tracking }
            let connection = connection
            let inbox = inbox
            let tracking = Task { () -> Result<Void, PreferencesProxyError> in
                do throws(DBusError) {
                    try await connection.addMatch(Self.ownerRule)
                } catch {
                    return .failure(PreferencesProxyError(error))
                }
                await withCheckedContinuation { (applied: CheckedContinuation<Void, Never>) in
                    connection.call(.methodCall(
                        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "GetNameOwner", body: [.string(Self.endpoint.busName)]
                    )) { reply in
                        let owner = (try? reply.get())?.body.first?.stringValue
                        if case .terminated = inbox.yield(.ownerAnswer(owner, applied)) { applied.resume() }
                    }
                }
                return .success(())
            }
            state.tracking = tracking
            return tracking
        }
        if case .failure(let error) = await tracking.value {
            state.withLock { $0.tracking = nil }
            throw error
        }
    }

    // MARK: Receiving

    private func process(_ item: Inbound) async {
        switch item {
        case .ownerAnswer(let owner, let applied):
            setOwner(owner, announce: false)
            applied.resume()
        case .disconnected:
            let subscribers = state.withLock { state -> [Subscriber] in
                state.closed = true
                defer { state.subscribers = [:] }
                return Array(state.subscribers.values)
            }
            for subscriber in subscribers {
                subscriber.deliver(.disconnected)
                subscriber.finish()
            }
        case .message(let message):
            if message.sender == "org.freedesktop.DBus", message.member == "NameOwnerChanged",
               message.body.count == 3, message.body[0] == .string(Self.endpoint.busName),
               case .string(let newOwner) = message.body[2] {
                setOwner(newOwner.isEmpty ? nil : newOwner, announce: true)
                return
            }
            // Only the owner of prefsd's name speaks for prefsd: a signal of the same shape
            // from any other peer (broadcast or sent to us alone) is dropped.
            let owner = state.withLock { $0.owner }
            guard case .known(let name?) = owner, message.sender == name, let signal = ServiceSignal(message) else { return }
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

    private func setOwner(_ owner: String?, announce: Bool) {
        let previous = state.withLock { state -> Owner in
            defer { state.owner = .known(owner) }
            return state.owner
        }
        guard announce, case .known(let before) = previous, before != owner else { return }
        deliver(.ownerChanged(previous: before, current: owner))
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
