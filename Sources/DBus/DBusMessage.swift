/// A D-Bus message as plain Swift data: header fields and a decoded body.
public struct DBusMessage: Sendable {
    /// The four message types of the protocol.
    public enum Kind: Sendable {
        /// A method call.
        case methodCall
        /// A successful reply.
        case methodReturn
        /// An error reply.
        case error
        /// A signal.
        case signal
    }

    /// The message type.
    public var kind: Kind
    /// Set on received messages; 0 for messages not yet sent.
    public var serial: UInt32
    /// For replies, the serial of the call answered.
    public var replySerial: UInt32?
    /// Object path (calls and signals).
    public var path: String?
    /// Interface (required for signals, optional for calls).
    public var interface: String?
    /// Method or signal name.
    public var member: String?
    /// Error name (error replies).
    public var errorName: String?
    /// Destination bus name.
    public var destination: String?
    /// Sender's unique name (set on received messages by the bus).
    public var sender: String?
    /// The sender does not want a reply.
    public var noReplyExpected: Bool
    /// The bus may start a service to deliver the call (bus activation); default true.
    public var autoStart: Bool
    /// The arguments.
    public var body: [DBusValue]

    /// Creates a message with every field given.
    public init(
        kind: Kind, serial: UInt32 = 0, replySerial: UInt32? = nil, path: String? = nil,
        interface: String? = nil, member: String? = nil, errorName: String? = nil,
        destination: String? = nil, sender: String? = nil, noReplyExpected: Bool = false,
        autoStart: Bool = true, body: [DBusValue] = []
    ) {
        self.kind = kind
        self.serial = serial
        self.replySerial = replySerial
        self.path = path
        self.interface = interface
        self.member = member
        self.errorName = errorName
        self.destination = destination
        self.sender = sender
        self.noReplyExpected = noReplyExpected
        self.autoStart = autoStart
        self.body = body
    }

    /// The concatenation of the body's signatures.
    public var signature: String {
        body.map(\.signatureText).joined()
    }

    /// Whether the body's signature is `expected`: ``signature`` `== expected` without
    /// building the joined string (a call's arguments are checked this way on every call).
    public func hasSignature(_ expected: String) -> Bool {
        let bytes: String.UTF8View = expected.utf8
        var index: String.UTF8View.Index = bytes.startIndex
        for value in body {
            if let code: UInt8 = value.oneLetterTypeCode {
                if index == bytes.endIndex || bytes[index] != code { return false }
                index = bytes.index(after: index)
                continue
            }
            for byte: UInt8 in value.signatureText.utf8 {
                if index == bytes.endIndex || bytes[index] != byte { return false }
                index = bytes.index(after: index)
            }
        }
        return index == bytes.endIndex
    }

    /// A method call.
    public static func methodCall(
        destination: String?, path: String, interface: String?, member: String,
        body: [DBusValue] = []
    ) -> DBusMessage {
        DBusMessage(
            kind: .methodCall, path: path, interface: interface, member: member,
            destination: destination, body: body)
    }

    /// A broadcast signal.
    public static func signal(
        path: String, interface: String, member: String, body: [DBusValue] = []
    ) -> DBusMessage {
        DBusMessage(kind: .signal, path: path, interface: interface, member: member, body: body)
    }

    /// A reply to this call: destination = sender, replySerial = serial.
    public func makeReturn(_ body: [DBusValue] = []) -> DBusMessage {
        DBusMessage(
            kind: .methodReturn, replySerial: serial, destination: sender, autoStart: false,
            body: body)
    }

    /// An error reply to this call, with `message` as its one string argument.
    public func makeError(name: String, message: String) -> DBusMessage {
        DBusMessage(
            kind: .error, replySerial: serial, errorName: name, destination: sender,
            autoStart: false, body: [.string(message)])
    }

    /// The first string argument of an error message, else nil.
    public var errorMessage: String? {
        guard kind == .error, case .string(let text)? = body.first else { return nil }
        return text
    }
}
