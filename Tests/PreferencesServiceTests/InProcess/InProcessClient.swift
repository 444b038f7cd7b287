import DBus
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import ServiceTestSupport

/// Calls the service's methods over an in-memory connection, as `ServiceClient` does over
/// a bus: the typed ones with the proxy's requests, failing with the ``DBusError`` of the
/// error answered, and any member with any arguments for tests of what the service refuses.
struct InProcessClient {
    let connection: InMemoryConnection
    /// The unique name the calls come from.
    var sender = InMemoryConnection.defaultSender

    /// Calls `method` with `body` and returns the reply's arguments.
    @discardableResult
    func call(_ method: String, _ body: [DBusValue] = [], interface: String? = PreferencesBus.interface) async throws -> [DBusValue] {
        try await send(
            .methodCall(destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: interface, member: method, body: body)
        ).body
    }

    /// The error name a call is refused with, or `nil` when it succeeds.
    func refusal(_ method: String, _ body: [DBusValue]) async -> String? {
        do {
            try await call(method, body)
            return nil
        } catch let error as DBusError where error.code == .remote {
            return error.name ?? ""
        } catch {
            return "unexpected: \(error)"
        }
    }

    /// Sends one of the proxy's requests and reads its reply.
    @discardableResult
    func perform<Reply>(_ request: PreferencesRequest<Reply>) async throws -> Reply {
        try request.reply(try await send(request.message).body)
    }

    /// The reply to `message`, sent from ``sender``.
    func send(_ message: DBusMessage) async throws(DBusError) -> DBusMessage {
        var message = message
        message.sender = sender
        return try await connection.call(message)
    }

    func write(_ domain: String, _ key: String, _ value: PropertyListValue) async throws {
        try await perform(PreferencesCall.write(domain, key, value))
    }

    func readValue(_ domain: String, _ key: String) async throws -> PropertyListValue {
        try await perform(PreferencesCall.read(domain, key))
    }

    func readDomain(_ domain: String) async throws -> [String: PropertyListValue] {
        try await perform(PreferencesCall.readDomain(domain))
    }

    func readVolatileDomain(_ domain: String) async throws -> [String: PropertyListValue] {
        try await perform(PreferencesCall.readVolatileDomain(domain))
    }

    func domains() async throws -> [String] {
        try await perform(PreferencesCall.domains())
    }

    func volatileDomains() async throws -> [String] {
        try await perform(PreferencesCall.volatileDomains())
    }

    /// A dictionary of values as the methods take it, `a{sv}`.
    static func values(_ values: [String: PropertyListValue]) -> DBusValue {
        PropertyListValue.dictionary(values).dbusValue
    }
}

/// A `Changed`, `VolatileChanged` or `ForcedKeysChanged` signal as the service sent it.
struct SentSignal: Equatable {
    var member: String
    var domain: String
    /// The changed values (`Changed`, `VolatileChanged`).
    var changed: [String: PropertyListValue] = [:]
    /// The removed keys (`Changed`, `VolatileChanged`); the forced keys (`ForcedKeysChanged`).
    var keys: [String] = []
    /// The keys to read again (`Changed`, `VolatileChanged`).
    var invalidated: [String] = []

    /// The signal `message` is, when it is one of the preferences interface's.
    init?(_ message: DBusMessage) {
        guard message.kind == .signal, message.interface == PreferencesBus.interface, message.path == PreferencesBus.objectPath,
            let member = message.member, case .string(let domain)? = message.body.first
        else { return nil }
        self.member = member
        self.domain = domain
        switch member {
        case PreferencesBus.forcedKeysChangedSignal:
            guard message.body.count == 2, case .array(_, let keys) = message.body[1] else { return nil }
            self.keys = keys.compactMap(\.stringValue)
        default:
            guard message.body.count == 4, let changed = try? PropertyListValue.dictionary(dbus: message.body[1]),
                case .array(_, let removed) = message.body[2], case .array(_, let invalidated) = message.body[3]
            else { return nil }
            self.changed = changed
            keys = removed.compactMap(\.stringValue)
            self.invalidated = invalidated.compactMap(\.stringValue)
        }
    }

    /// The `Changed` of `domain` with `changed` and `removed`.
    init(changed domain: String, _ changed: [String: PropertyListValue], removed: [String] = [], member: String = PreferencesBus.changedSignal) {
        self.member = member
        self.domain = domain
        self.changed = changed
        keys = removed
    }
}

extension InMemoryConnection {
    /// The preferences signals sent so far, once at least `count` were (or a few seconds
    /// passed).
    func preferencesSignals(count: Int) async -> [SentSignal] {
        await signals(count: count).compactMap(SentSignal.init)
    }
}
