internal import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// A method call read where it lies, before it is decoded: its member, interface,
/// signature, sender and string arguments, for an object's quick answer (see
/// ``DBusConnection/registerObject(path:quickAnswer:handler:)``).
///
/// Decoding a call into a ``DBusMessage`` (every header string and argument made a Swift
/// value, the body an array) costs more than looking a stored value up. A quick answer
/// reads only what it needs, from the libdbus message as it was received and validated;
/// when it does not answer, the call is decoded and handled as any other. Noncopyable, and
/// lent to the quick answer only for the time it runs: the libdbus message it reads is the
/// connection's.
public struct IncomingCall: ~Copyable {
    private enum Source {
        case received(OpaquePointer)
        case decoded(DBusMessage)
    }

    private let source: Source

    /// A call libdbus delivered, which the caller keeps alive while this value is used.
    init(received message: OpaquePointer) {
        source = .received(message)
    }

    /// A call already decoded, as a connection without libdbus delivers it (an in-memory
    /// connection in tests).
    public init(_ message: DBusMessage) {
        source = .decoded(message)
    }

    /// Whether the call is of method `member` of `interface` and carries arguments of
    /// signature `signature`. A call naming no interface matches, as an object with one
    /// method of that name answers it.
    public func isCall(member: String, interface: String, signature: String) -> Bool {
        switch source {
        case .received(let message):
            guard let own = dbus_message_get_member(message), member.withCString({ strcmp($0, own) == 0 }),
                let ownSignature = dbus_message_get_signature(message), signature.withCString({ strcmp($0, ownSignature) == 0 })
            else { return false }
            guard let ownInterface = dbus_message_get_interface(message) else { return true }
            return interface.withCString { strcmp($0, ownInterface) == 0 }
        case .decoded(let message):
            return message.kind == .methodCall && message.member == member && (message.interface ?? interface) == interface
                && message.hasSignature(signature)
        }
    }

    /// The sender's unique name, as the bus set it; nil on a peer-to-peer connection.
    public var sender: String? {
        switch source {
        case .received(let message): dbus_message_get_sender(message).map { String(cString: $0) }
        case .decoded(let message): message.sender
        }
    }

    /// The call's first two arguments when both are strings (a signature starting `ss`),
    /// else nil.
    public func twoStringArguments() -> (String, String)? {
        switch source {
        case .received(let message):
            var iterator = DBusMessageIter()
            guard dbus_message_iter_init(message, &iterator) != 0,
                let first = Self.string(at: &iterator), dbus_message_iter_next(&iterator) != 0,
                let second = Self.string(at: &iterator)
            else { return nil }
            return (first, second)
        case .decoded(let message):
            guard message.body.count >= 2, case .string(let first) = message.body[0], case .string(let second) = message.body[1]
            else { return nil }
            return (first, second)
        }
    }

    /// The string `iterator` is at (valid UTF-8: libdbus checked the message when it read
    /// it), or nil when it is at another type.
    private static func string(at iterator: inout DBusMessageIter) -> String? {
        guard dbus_message_iter_get_arg_type(&iterator) == CDBUS_TYPE_STRING else { return nil }
        var pointer: UnsafePointer<CChar>?
        dbus_message_iter_get_basic(&iterator, &pointer)
        return pointer.map { String(cString: $0) }
    }
}
