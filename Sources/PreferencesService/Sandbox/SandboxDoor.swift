import DBus
import Foundation
import Logging
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// prefsd's door for sandboxed applications: a second connection that owns
/// `io.github.prefsd.Sandboxed1`, serves the preferences object there for the service, and
/// sends the service's signals to each subscriber alone, never as a broadcast.
///
/// Broadcasts of a unique name reach every peer that may talk to it; xdg-dbus-proxy lets
/// a Flatpak application talk to this connection only, so it receives nothing but the
/// signals addressed to it, about the domains it subscribed to (and may read).
public final class SandboxDoor: Sendable {
    /// A subscriber's subscriptions.
    private struct Subscription: Sendable {
        var identity: CallerIdentity
        /// Every domain the subscriber may read.
        var everything = false
        var domains: Set<String> = []
        var count: Int { domains.count + (everything ? 1 : 0) }

        func follows(_ domain: String) -> Bool {
            domains.contains(domain) || (everything && identity.mayRead(domain))
        }
    }

    /// Every subscriber's subscriptions, and how many each sandboxed application holds
    /// over all its connections.
    private struct Subscribers: Sendable {
        var bySender: [String: Subscription] = [:]
        var perApplication: [String: Int] = [:]

        /// Puts `subscription` in force for `sender` (removes it when `nil` or empty),
        /// keeping the application's count.
        mutating func set(_ sender: String, _ subscription: Subscription?) {
            let old = bySender[sender]
            let kept = subscription.flatMap { $0.count == 0 ? nil : $0 }
            bySender[sender] = kept
            guard case .application(let id)? = (kept ?? old)?.identity else { return }
            let count = (perApplication[id] ?? 0) - (old?.count ?? 0) + (kept?.count ?? 0)
            perApplication[id] = count > 0 ? count : nil
        }
    }

    /// The connection owning (or about to own) the sandbox name.
    public let connection: DBusConnection
    private let logger: Logger
    private let subscriptions = Mutex(Subscribers())
    /// The most subscriptions one sandboxed application holds over all its connections.
    let subscriptionsPerApplication: Int
    let standardInterfaces: StandardInterfaces

    /// A door on `connection`; the service registers its object on it. Each sandboxed
    /// application may hold `subscriptionsPerApplication` subscriptions over all its
    /// connections (``ServiceLimits/applicationSubscriptions``).
    public init(
        connection: DBusConnection, version: String, logger: Logger,
        subscriptionsPerApplication: Int = ServiceLimits.default.applicationSubscriptions
    ) {
        self.connection = connection
        self.logger = logger
        self.subscriptionsPerApplication = subscriptionsPerApplication
        standardInterfaces = .sandbox(version: version)
    }

    /// The match rule for names coming onto the bus and leaving it.
    static let ownerChangeRule =
        "type='signal',sender='\(BusDriver.name)',interface='\(BusDriver.interface)',member='\(BusDriver.nameOwnerChanged)',path='\(BusDriver.path)'"

    /// Starts hearing of unique names coming onto the bus and leaving it; `arrived` and
    /// `gone` run on the connection's queue with each one. Subscriptions of a name that
    /// left are dropped first.
    public func followConnections(
        arrived: (@Sendable (String) -> Void)? = nil, gone: @escaping @Sendable (String) -> Void
    ) async throws(DBusError) {
        connection.setSignalHandler { [weak self] message in
            guard let change = BusDriver.ownerChange(message), change.name.hasPrefix(":") else { return }
            let name = change.name
            if change.newOwner.isEmpty {
                self?.subscriptions.withLock { $0.set(name, nil) }
                gone(name)
            } else if change.oldOwner.isEmpty {
                arrived?(name)
            }
        }
        try await connection.addMatch(Self.ownerChangeRule)
    }

    /// Whether `call` came in through the door (to its name or its unique name).
    func serves(_ call: DBusMessage) -> Bool {
        call.destination == SandboxBus.busName || call.destination == connection.uniqueName
    }

    /// Answers `call` when it is for the door's own interface or for `Introspectable` or
    /// `Properties`; `nil` when the preferences interface must answer it.
    func answer(_ call: DBusMessage, from caller: CallerIdentity) -> DBusMessage? {
        if let answer = standardInterfaces.answer(call) { return answer }
        guard call.interface == SandboxBus.interface else { return nil }
        let subscribe: Bool
        switch call.member {
        case SandboxBus.subscribeMethod?: subscribe = true
        case SandboxBus.unsubscribeMethod?: subscribe = false
        default:
            return call.makeError(name: StandardErrorName.unknownMethod, message: "\(SandboxBus.interface) has no method \(call.member ?? "(none)")")
        }
        guard call.signature == SandboxBus.subscriptionSignature, case .array(_, let items)? = call.body.first else {
            return call.makeError(
                name: StandardErrorName.invalidArgs,
                message: "\(call.member ?? "") takes arguments of type (\(SandboxBus.subscriptionSignature)), not (\(call.signature))")
        }
        let domains = items.compactMap(\.stringValue)
        guard let sender = call.sender else {
            return call.makeError(name: StandardErrorName.failed, message: "a subscription needs a sender")
        }
        if !subscribe {
            unsubscribe(sender, from: domains)
            return call.makeReturn()
        }
        return self.subscribe(sender, caller, to: domains, answering: call)
    }

    private func subscribe(_ sender: String, _ caller: CallerIdentity, to domains: [String], answering call: DBusMessage) -> DBusMessage {
        func refuse(_ error: PreferencesServiceError) -> DBusMessage {
            call.makeError(name: error.busErrorName, message: error.description)
        }
        for domain in domains {
            if let problem = DomainName.problem(with: domain) {
                return refuse(.invalidName("cannot subscribe to \"\(domain)\": \(problem)"))
            }
            guard caller.mayRead(domain) else { return refuse(.accessDenied(caller.refusal(reading: domain))) }
        }
        if case .unidentified(let reason) = caller {
            return refuse(.accessDenied("prefsd cannot tell who is calling, so it sends nothing: \(reason)"))
        }
        let limit = subscriptionsPerApplication
        enum Refusal {
            case peer
            case application(String, Int)
        }
        let refusal = subscriptions.withLock { all -> Refusal? in
            let old = all.bySender[sender]
            var subscription = old ?? Subscription(identity: caller)
            if domains.isEmpty { subscription.everything = true } else { subscription.domains.formUnion(domains) }
            guard subscription.count <= SandboxBus.maximumSubscriptionsPerPeer else { return .peer }
            if case .application(let id) = caller {
                let held = all.perApplication[id] ?? 0
                if held - (old?.count ?? 0) + subscription.count > limit { return .application(id, held) }
            }
            all.set(sender, subscription)
            return nil
        }
        switch refusal {
        case nil:
            return call.makeReturn()
        case .peer:
            return call.makeError(
                name: StandardErrorName.limitsExceeded,
                message: "one peer may subscribe to at most \(SandboxBus.maximumSubscriptionsPerPeer) domains; unsubscribe from some first")
        case .application(let id, let held):
            return call.makeError(
                name: StandardErrorName.limitsExceeded,
                message:
                    "the sandboxed application \(id) holds \(held) subscriptions over its connections, and may hold at most \(limit) (prefsd --max-app-subscriptions); unsubscribe from some first"
            )
        }
    }

    private func unsubscribe(_ sender: String, from domains: [String]) {
        subscriptions.withLock { all in
            guard var subscription = all.bySender[sender] else { return }
            if domains.isEmpty { subscription.everything = false } else { subscription.domains.subtract(domains) }
            all.set(sender, subscription)
        }
    }

    /// Sends `signal` (`Changed`, `VolatileChanged` or `ForcedKeysChanged`, whose first
    /// argument is the domain) to each subscriber following its domain, addressed to it alone.
    func forward(_ signal: DBusMessage) {
        guard let domain = signal.body.first?.stringValue else { return }
        let receivers = subscriptions.withLock { all in all.bySender.filter { $0.value.follows(domain) }.map(\.key) }
        for receiver in receivers {
            var message = signal
            message.destination = receiver
            do {
                try connection.send(message)
            } catch {
                logger.error("could not send a signal to a sandboxed subscriber", metadata: ["to": "\(receiver)", "error": "\(error)"])
            }
        }
    }
}

extension StandardInterfaces {
    /// What the door's object answers besides its own interfaces: `Introspect` with the
    /// preferences XML and the door's interface added, and `Version`, read-only.
    static func sandbox(version: String) -> StandardInterfaces {
        StandardInterfaces(
            path: PreferencesBus.objectPath, introspectionXML: sandboxServedXML,
            interfaceProperties: [
                PreferencesBus.interface: [PreferencesBus.versionProperty: .string(version)],
                SandboxBus.interface: [:],
            ]
        )
    }
}

/// The XML served on the sandbox name: the preferences object's XML with the
/// `io.github.prefsd.Sandboxed1` interface of `Introspection/io.github.prefsd.Sandboxed1.xml`
/// (its comment and interface element) inserted before the closing `</node>`.
let sandboxServedXML: String = {
    let door = sandboxIntrospectionXML
    guard let open = door.range(of: "<node>"), let close = door.range(of: "</node>", options: .backwards),
        let end = introspectionXML.range(of: "</node>", options: .backwards)
    else { return introspectionXML }
    let inner = door[open.upperBound..<close.lowerBound].drop { $0 == "\n" }
    return String(introspectionXML[..<end.lowerBound]) + inner + String(introspectionXML[end.lowerBound...])
}()
