import DBus
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import ServiceTestSupport

/// Calls the service's methods over an in-memory connection, as `ServiceClient` does over
/// a bus (see `PreferencesCaller`).
struct InProcessClient: PreferencesCaller {
    let connection: InMemoryConnection
    /// The unique name the calls come from.
    var sender = InMemoryConnection.defaultSender

    /// The reply to `message`, sent from ``sender``.
    func send(_ message: DBusMessage) async throws(DBusError) -> DBusMessage {
        var message = message
        message.sender = sender
        return try await connection.call(message)
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
