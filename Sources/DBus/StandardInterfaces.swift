/// How an exported object answers `org.freedesktop.DBus.Introspectable` and
/// `org.freedesktop.DBus.Properties` (`Peer` is answered by libdbus itself): its
/// introspection XML served verbatim, and read-only properties.
public struct StandardInterfaces: Sendable {
    /// The `<interface>` elements of what every exported object answers besides its own
    /// interfaces (`Introspectable`, `Peer`, `Properties`), indented as a child of `<node>`,
    /// for an introspection document to include.
    public static let introspectionXML = """
          <interface name="org.freedesktop.DBus.Introspectable">
            <method name="Introspect">
              <arg name="xml_data" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Peer">
            <method name="Ping"/>
            <method name="GetMachineId">
              <arg name="machine_uuid" type="s" direction="out"/>
            </method>
          </interface>
          <interface name="org.freedesktop.DBus.Properties">
            <method name="Get">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="out"/>
            </method>
            <method name="GetAll">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="properties" type="a{sv}" direction="out"/>
            </method>
            <method name="Set">
              <arg name="interface_name" type="s" direction="in"/>
              <arg name="property_name" type="s" direction="in"/>
              <arg name="value" type="v" direction="in"/>
            </method>
          </interface>
        """

    /// The object's path, for error messages.
    public var path: String
    /// The XML `Introspect` answers.
    public var introspectionXML: String
    /// The read-only properties of each of the object's own interfaces (an interface with
    /// none maps to an empty dictionary).
    public var interfaceProperties: [String: [String: DBusValue]]

    /// Describes an object.
    public init(path: String, introspectionXML: String, interfaceProperties: [String: [String: DBusValue]]) {
        self.path = path
        self.introspectionXML = introspectionXML
        self.interfaceProperties = interfaceProperties
    }

    /// The reply to `call` when it is for `Introspectable` or `Properties` (an `Introspect`
    /// without an interface too), or `nil` when it is for another interface.
    public func answer(_ call: DBusMessage) -> DBusMessage? {
        switch call.interface {
        case StandardInterface.introspectable?:
            return introspect(call)
        case StandardInterface.properties?:
            return property(call)
        case nil where call.member == "Introspect":
            return introspect(call)
        default:
            return nil
        }
    }

    private func introspect(_ call: DBusMessage) -> DBusMessage {
        guard call.member == "Introspect" else { return unknownMethod(call) }
        guard call.signature.isEmpty else { return wrongSignature(call, expected: "") }
        return call.makeReturn([.string(introspectionXML)])
    }

    private func property(_ call: DBusMessage) -> DBusMessage {
        let body = call.body
        switch (call.member, call.signature) {
        case ("Get", "ss"):
            guard case .string(let interface) = body[0], case .string(let name) = body[1],
                let value = properties(of: interface)?[name]
            else { return unknownProperty(call) }
            return call.makeReturn([.variant(value)])
        case ("GetAll", "s"):
            guard case .string(let interface) = body[0] else { return unknownProperty(call) }
            let entries = (properties(of: interface) ?? [:]).sorted { $0.key < $1.key }
            return call.makeReturn([.dictionary(key: .string, value: .variant, entries.map { (.string($0.key), .variant($0.value)) })])
        case ("Set", "ssv"):
            guard case .string(let interface) = body[0], case .string(let name) = body[1],
                properties(of: interface)?[name] != nil
            else { return unknownProperty(call) }
            return call.makeError(name: StandardErrorName.propertyReadOnly, message: "the property \(name) is read-only")
        case ("Get", _): return wrongSignature(call, expected: "ss")
        case ("GetAll", _): return wrongSignature(call, expected: "s")
        case ("Set", _): return wrongSignature(call, expected: "ssv")
        default: return unknownMethod(call)
        }
    }

    /// The properties of an interface of the object, or `nil` when it has no such interface.
    private func properties(of interface: String) -> [String: DBusValue]? {
        if let own = interfaceProperties[interface] { return own }
        return [StandardInterface.introspectable, StandardInterface.peer, StandardInterface.properties].contains(interface) ? [:] : nil
    }

    private func unknownProperty(_ call: DBusMessage) -> DBusMessage {
        let interface = call.body.first?.stringValue ?? "?"
        let name = call.body.count > 1 ? call.body[1].stringValue ?? "?" : "?"
        return call.makeError(
            name: StandardErrorName.unknownProperty,
            message: "the interface \(interface) of \(path) has no property \(name)")
    }

    private func unknownMethod(_ call: DBusMessage) -> DBusMessage {
        call.makeError(
            name: StandardErrorName.unknownMethod,
            message: "\(call.interface ?? "the object") has no method \(call.member ?? "(none)")")
    }

    private func wrongSignature(_ call: DBusMessage, expected: String) -> DBusMessage {
        call.makeError(
            name: StandardErrorName.invalidArgs,
            message: "\(call.member ?? "the method") takes arguments of type (\(expected)), not (\(call.signature))")
    }
}
