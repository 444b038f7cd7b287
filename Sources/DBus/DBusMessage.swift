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
    public var body: [DBusValue] {
        // A body set anew is encoded anew.
        didSet { encodedBody = nil }
    }
    /// The libdbus message a received method call was decoded from (see
    /// ``ReceivedCall``); nil for messages built here and after ``detached()``.
    var received: RawMessage?
    /// For a reply made with ``makeReturn(_:)`` or ``makeError(name:message:)`` of a
    /// received call: that call, so the encoder can build the reply from it.
    var answering: AnsweredCall?
    /// For a reply made with ``makeReturn(_:)-(ReplyBody)``: its body, encoded already.
    var encodedBody: ReplyBody?

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
        var reply = DBusMessage(
            kind: .methodReturn, replySerial: serial, destination: sender, autoStart: false,
            body: body)
        reply.answering = answered
        return reply
    }

    /// An error reply to this call, with `message` as its one string argument.
    public func makeError(name: String, message: String) -> DBusMessage {
        var reply = DBusMessage(
            kind: .error, replySerial: serial, errorName: name, destination: sender,
            autoStart: false, body: [.string(message)])
        reply.answering = answered
        return reply
    }

    /// This message without the libdbus message it was received as (its replies are then
    /// built field by field, as for any message made here).
    ///
    /// libdbus counts every received message still alive against the connection's limit
    /// (`dbus_connection_set_max_received_size`, 63 MiB by default) and stops reading
    /// from the socket past it. A call kept waiting for something that must itself be read
    /// from the connection (a reply of the bus) should be detached first, or calls kept
    /// that way could stop the reading they wait for.
    public func detached() -> DBusMessage {
        var message = self
        message.received = nil
        message.answering = nil
        message.encodedBody = nil
        return message
    }

    /// What a reply to this received call is built from; nil when it was not received.
    var answered: AnsweredCall? {
        received.map { AnsweredCall(call: $0, destination: sender, replySerial: serial) }
    }

    /// The first string argument of an error message, else nil.
    public var errorMessage: String? {
        guard kind == .error, case .string(let text)? = body.first else { return nil }
        return text
    }
}
