import Synchronization

/// A message encoded ahead of sending (``DBusConnection/encode(_:)``), so the encoding can
/// run while something else is waited for, and the send later costs only the send.
///
/// It can be sent once: libdbus numbers a message when it is sent, and a second send would
/// repeat the number.
public final class EncodedMessage: Sendable {
    /// The message it was encoded from.
    public let message: DBusMessage
    /// The libdbus message, until it is sent.
    private let raw: Mutex<RawMessage?>

    init(message: DBusMessage, raw: RawMessage) {
        self.message = message
        self.raw = Mutex(raw)
    }

    /// Encodes `message` for sending later on a connection, with the checks of
    /// ``DBusConnection/send(_:)-(DBusMessage)``: throws ``DBusError/invalidMessage(_:)``
    /// for a message libdbus would refuse. Encoding needs no connection.
    public convenience init(encoding message: DBusMessage) throws(DBusError) {
        self.init(message: message, raw: try MessageEncoder.encode(message))
    }

    /// The libdbus message, handed out once.
    func take() -> RawMessage? {
        raw.withLock { raw in
            defer { raw = nil }
            return raw
        }
    }
}

extension DBusConnection {
    /// Encodes `message` for sending later with ``send(_:)-(EncodedMessage)``, with the same
    /// checks as ``send(_:)-(DBusMessage)``: throws ``DBusError/invalidMessage(_:)`` for a
    /// message libdbus would refuse.
    public func encode(_ message: DBusMessage) throws(DBusError) -> EncodedMessage {
        try EncodedMessage(encoding: message)
    }

    /// Sends a message encoded by ``encode(_:)``, like ``send(_:)-(DBusMessage)``. Throws
    /// ``DBusError/invalidMessage(_:)`` when it was sent already, and
    /// ``DBusError/disconnected`` once the connection is closed or lost.
    public func send(_ encoded: EncodedMessage) throws(DBusError) {
        guard let raw = encoded.take() else {
            throw .invalidMessage("this encoded message was sent already; encode the message again to send it again")
        }
        try core.enqueueSend(raw)
    }
}
