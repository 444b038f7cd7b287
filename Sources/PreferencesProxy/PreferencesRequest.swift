import DBus
import PreferencesModel
import PreferencesProtocol

/// One call of prefsd's interface, ready to send: the member it calls, its arguments, the
/// reply signature the Introspection XML gives, and how that reply is read.
///
/// ``PreferencesCall`` makes one for every method and property of the interface;
/// ``PreferencesProxy`` sends them (``PreferencesProxy/perform(_:timeout:)`` or
/// ``PreferencesProxy/performBlocking(_:timeout:)``). A request is a value: a benchmark
/// may send its ``message`` itself.
public struct PreferencesRequest<Reply: Sendable>: Sendable {
    /// The interface of the member: prefsd's own, or `org.freedesktop.DBus.Properties`
    /// for a property.
    public let interface: String
    /// The method called (`Read`, `Write`, …, or `Get` for a property).
    public let member: String
    /// The arguments, in the order and with the types the XML gives.
    public let arguments: [DBusValue]
    /// The signature of a successful reply, as the XML gives it (`""` for none).
    public let replySignature: String
    private let decode: @Sendable ([DBusValue]) throws(PreferencesProxyError) -> Reply

    init(
        interface: String = PreferencesBus.interface, member: String, _ arguments: [DBusValue],
        reply replySignature: String,
        decode: @escaping @Sendable ([DBusValue]) throws(PreferencesProxyError) -> Reply
    ) {
        self.interface = interface
        self.member = member
        self.arguments = arguments
        self.replySignature = replySignature
        self.decode = decode
    }

    /// The signature of ``arguments``.
    public var argumentSignature: String { arguments.map(\.signature.rawValue).joined() }

    /// The method call to prefsd's object, at this process's endpoint (the main name, or
    /// the sandbox door inside Flatpak: `PreferencesEndpoint.current`).
    public var message: DBusMessage {
        .methodCall(
            destination: PreferencesEndpoint.current.busName, path: PreferencesBus.objectPath,
            interface: interface, member: member, body: arguments)
    }

    /// Reads a reply's arguments.
    /// - Throws: ``PreferencesProxyError/unexpectedReply(_:)`` when the reply does not have
    ///   the XML's signature or holds no property-list value.
    public func reply(_ body: [DBusValue]) throws(PreferencesProxyError) -> Reply {
        let signature = body.map(\.signature.rawValue).joined()
        guard signature == replySignature else {
            throw .unexpectedReply("\(member) answered (\(signature)) where the interface gives (\(replySignature))")
        }
        return try decode(body)
    }
}

/// The answer of `Lookup`: the first domain of the search list that has the key, and its value.
public struct PreferencesLookup: Sendable, Hashable {
    /// The domain that has the key.
    public var domain: String
    /// The key's value there.
    public var value: PropertyListValue

    /// A lookup answer.
    public init(domain: String, value: PropertyListValue) {
        self.domain = domain
        self.value = value
    }
}

/// How replies' values are read: the service's own answers are trusted to nest as deep as
/// it stores, so the client does not add a limit of its own.
enum ReplyValues {
    static let nesting = Int.max / 2

    static func value(_ dbus: DBusValue) throws(PreferencesProxyError) -> PropertyListValue {
        do {
            return try PropertyListValue(dbus: dbus, maximumNesting: nesting)
        } catch {
            throw .unexpectedReply(error.description)
        }
    }

    static func dictionary(_ dbus: DBusValue) throws(PreferencesProxyError) -> [String: PropertyListValue] {
        do {
            return try PropertyListValue.dictionary(dbus: dbus, maximumNesting: nesting)
        } catch {
            throw .unexpectedReply(error.description)
        }
    }

    static func strings(_ dbus: DBusValue) -> [String] {
        guard case .array(_, let items) = dbus else { return [] }
        return items.compactMap(\.stringValue)
    }

    static func dictionaryArgument(_ values: [String: PropertyListValue]) -> DBusValue {
        PropertyListValue.dictionary(values).dbusValue
    }
}
