internal import CDBus

/// A method return's body encoded once, to answer many calls with.
///
/// Building a reply with libdbus's builder (`dbus_message_new_method_return`, then each
/// argument through `dbus_message_iter_*`, which rewrites the header's signature field)
/// costs more than the rest of a `Read`, and marshalling it in Swift for
/// `dbus_message_demarshal` more still (libdbus validates the whole message again). A
/// `ReplyBody` keeps a method return holding only the body, built once; each reply made
/// from it is a copy of that message (`dbus_message_copy`: the header and body bytes
/// copied, nothing parsed or validated) given the call's serial and sender, at about
/// three fifths of the builder's cost (docs/benchmarks.md, "Instructions per call"). Worth
/// it for a body answered more than once (a stored value read again and again).
///
/// The kept message is never sent or changed, only copied, so copies can be made on any
/// thread.
public final class ReplyBody: Sendable {
    /// The arguments, as a reply made from this body carries them (``DBusMessage/body``).
    public let values: [DBusValue]
    /// How many bytes the body takes on the wire (as ``DBusValue/marshalledSize`` counts a
    /// structure of ``values``).
    public let marshalledSize: Int
    /// A method return with this body, no destination and no reply serial, flagged as every
    /// reply is (no reply expected: no; auto start: no).
    private let template: RawMessage

    /// Encodes `values`.
    /// - Throws: ``DBusError/invalidMessage(_:)`` for a body libdbus would refuse (the checks
    ///   of ``DBusConnection/send(_:)-(DBusMessage)``), or ``DBusError`` out of memory.
    public init(_ values: [DBusValue]) throws(DBusError) {
        try ValueValidator.validate(body: values)
        guard let pointer = dbus_message_new(CDBUS_MESSAGE_TYPE_METHOD_RETURN) else { throw DBusError(code: .outOfMemory) }
        let raw = RawMessage(owning: pointer)
        dbus_message_set_no_reply(pointer, 0)
        dbus_message_set_auto_start(pointer, 0)
        try MessageEncoder.appendBody(values, to: pointer)
        self.values = values
        self.marshalledSize = DBusValue.structure(values).marshalledSize
        self.template = raw
    }

    /// A new libdbus reply to `call` carrying this body: destination the call's sender,
    /// reply serial the call's serial.
    func reply(to call: AnsweredCall) throws(DBusError) -> RawMessage {
        try reply(toReceived: call.call.pointer, replySerial: call.replySerial)
    }

    /// A new libdbus reply to `call`, a method call as libdbus received it, carrying this
    /// body: destination the call's sender (none when it has none), reply serial its serial.
    func reply(toReceived call: OpaquePointer, replySerial: UInt32? = nil) throws(DBusError) -> RawMessage {
        guard let pointer = dbus_message_copy(template.pointer) else { throw DBusError(code: .outOfMemory) }
        let raw = RawMessage(owning: pointer)
        // The reply serial before the destination: appending the longer field last costs
        // libdbus less (callgrind).
        guard dbus_message_set_reply_serial(pointer, replySerial ?? dbus_message_get_serial(call)) != 0 else {
            throw DBusError(code: .outOfMemory)
        }
        // The call's own sender as libdbus holds it (validated when the call was received),
        // without making a C string of it again.
        if let sender = dbus_message_get_sender(call), dbus_message_set_destination(pointer, sender) == 0 {
            throw DBusError(code: .outOfMemory)
        }
        return raw
    }
}

extension DBusMessage {
    /// A reply to this call carrying `body`, encoded already: as `makeReturn` with
    /// `body.values`, and sent without building the body again while its destination, reply
    /// serial, header fields, flags and body stay as made here.
    public func makeReturn(_ body: ReplyBody) -> DBusMessage {
        // Made here, not through `makeReturn` with the values, which would copy the message
        // once more.
        var reply = DBusMessage(
            kind: .methodReturn, replySerial: serial, destination: sender, autoStart: false, body: body.values)
        reply.answering = answered
        reply.encodedBody = body
        return reply
    }
}
