import DBus
import PreferencesModel
import PreferencesProtocol

/// A signal of prefsd's interface, parsed (the one place a client reads their bodies).
enum ServiceSignal: Sendable {
    /// `Changed` or `VolatileChanged`, before its invalidated keys are re-read.
    case changed(DomainChange, volatile: Bool)
    /// `ForcedKeysChanged`.
    case forcedKeys(domain: String, keys: [String], serial: UInt32)

    /// The member names of the interface's signals with their signatures, as the
    /// Introspection XML gives them.
    static let signatures: [String: String] = [
        PreferencesBus.changedSignal: "sa{sv}asas",
        PreferencesBus.volatileChangedSignal: "sa{sv}asas",
        PreferencesBus.forcedKeysChangedSignal: "sas",
    ]

    /// Parses a signal of prefsd's interface and object; `nil` for anything else or a body
    /// of another signature. (A `Changed` of three arguments, as a 0.1 service sends,
    /// reads as one with nothing invalidated.)
    init?(_ message: DBusMessage) {
        guard message.kind == .signal, message.interface == PreferencesBus.interface,
            message.path == PreferencesBus.objectPath, let member = message.member,
            case .string(let domain)? = message.body.first
        else { return nil }
        let body = message.body
        switch member {
        case PreferencesBus.changedSignal, PreferencesBus.volatileChangedSignal:
            guard body.count == 3 || body.count == 4,
                let changed = try? PropertyListValue.dictionary(dbus: body[1], maximumNesting: ReplyValues.nesting),
                body[2].signature == .stringArray, body.count == 3 || body[3].signature == .stringArray
            else { return nil }
            let invalidated = body.count == 4 ? ReplyValues.strings(body[3]) : []
            self = .changed(
                DomainChange(
                    domain: domain, changed: changed, removed: ReplyValues.strings(body[2]), invalidated: invalidated,
                    serial: message.serial),
                volatile: member == PreferencesBus.volatileChangedSignal)
        case PreferencesBus.forcedKeysChangedSignal:
            guard body.count == 2, body[1].signature == .stringArray else { return nil }
            self = .forcedKeys(domain: domain, keys: ReplyValues.strings(body[1]), serial: message.serial)
        default:
            return nil
        }
    }
}

extension ServiceSignal {
    /// The event as the signal says it, invalidated keys not re-read.
    var rawEvent: PreferencesEvent {
        switch self {
        case .changed(let change, let volatile): volatile ? .volatileChanged(change) : .changed(change)
        case .forcedKeys(let domain, let keys, let serial): .forcedKeysChanged(domain: domain, keys: keys, serial: serial)
        }
    }

    /// Whether the proxy must re-read something before handing the change on.
    var needsResolving: Bool {
        if case .changed(let change, _) = self { return !change.invalidated.isEmpty }
        return false
    }
}
