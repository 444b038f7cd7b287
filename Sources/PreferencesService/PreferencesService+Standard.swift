import DBus
import PreferencesProtocol

/// The standard interfaces the object answers besides its own (Peer is libdbus's).
extension PreferencesService {
    /// `org.freedesktop.DBus.Introspectable.Introspect`: the XML of `Introspection/`, verbatim.
    func answerIntrospect(_ call: DBusMessage) {
        guard call.member == "Introspect" else { return unknownMethod(call) }
        guard call.signature.isEmpty else { return wrongSignature(call, expected: "") }
        reply(to: call, [.string(introspectionXML)])
    }

    /// `org.freedesktop.DBus.Properties`: `Version`, read-only.
    func answerProperties(_ call: DBusMessage) {
        let body = call.body
        switch (call.member, call.signature) {
        case ("Get", "ss"):
            guard case .string(let interface) = body[0], case .string(let name) = body[1] else { return }
            guard let value = properties(of: interface)?[name] else { return unknownProperty(call, interface, name) }
            reply(to: call, [.variant(value)])
        case ("GetAll", "s"):
            guard case .string(let interface) = body[0] else { return }
            let entries = (properties(of: interface) ?? [:]).sorted { $0.key < $1.key }
            reply(to: call, [.dictionary(key: .string, value: .variant, entries.map { (.string($0.key), .variant($0.value)) })])
        case ("Set", "ssv"):
            guard case .string(let interface) = body[0], case .string(let name) = body[1] else { return }
            guard properties(of: interface)?[name] != nil else { return unknownProperty(call, interface, name) }
            reply(to: call, error: StandardErrorName.propertyReadOnly, "the property \(name) is read-only")
        case ("Get", _): wrongSignature(call, expected: "ss")
        case ("GetAll", _): wrongSignature(call, expected: "s")
        case ("Set", _): wrongSignature(call, expected: "ssv")
        default: unknownMethod(call)
        }
    }

    /// The properties of an interface of the object, or `nil` when it has no such interface.
    private func properties(of interface: String) -> [String: DBusValue]? {
        switch interface {
        case PreferencesBus.interface: [PreferencesBus.versionProperty: .string(configuration.version)]
        case StandardInterface.introspectable, StandardInterface.peer, StandardInterface.properties: [:]
        default: nil
        }
    }

    private func unknownProperty(_ call: DBusMessage, _ interface: String, _ name: String) {
        reply(to: call, error: StandardErrorName.unknownProperty, "the interface \(interface) of \(PreferencesBus.objectPath) has no property \(name)")
    }

    private func unknownMethod(_ call: DBusMessage) {
        reply(to: call, error: StandardErrorName.unknownMethod,
              "\(call.interface ?? "the object") has no method \(call.member ?? "(none)")")
    }

    private func wrongSignature(_ call: DBusMessage, expected: String) {
        reply(to: call, error: StandardErrorName.invalidArgs,
              "\(call.member ?? "the method") takes arguments of type (\(expected)), not (\(call.signature))")
    }
}
