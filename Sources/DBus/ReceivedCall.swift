internal import CDBus

/// Replies built from the call they answer, as libdbus builds its own.
///
/// A reply made field by field (`dbus_message_new(METHOD_RETURN)`, then destination and
/// reply serial) has libdbus rewrite its header once per field, about a third of what
/// building `Read`'s reply cost (callgrind).
/// `dbus_message_new_method_return(call)` and `dbus_message_new_error(call, …)` write the
/// destination with the header in one go. So a method call delivered to a registered object
/// keeps the libdbus message it arrived as (``DBusMessage/received``), its replies
/// (``DBusMessage/makeReturn(_:)``, ``DBusMessage/makeError(name:message:)``) keep it as
/// ``AnsweredCall``, and ``MessageEncoder`` builds them from it.
enum ReceivedCall {
    /// Decodes a method call libdbus delivered (the caller keeps its own reference) and keeps
    /// a reference to it on the result when the sender waits for a reply.
    static func decode(_ pointer: OpaquePointer, valueBudget: Int?, strings: HeaderStrings? = nil) throws(DBusError) -> DBusMessage {
        try MessageDecoder.decode(pointer, valueBudget: valueBudget, strings: strings, keepingCall: true)
    }
}

/// The received call a reply answers, and the destination and reply serial the reply was
/// given from it: the encoder builds the reply from the call only while the reply still
/// carries those two (a caller may have changed them since).
struct AnsweredCall: Sendable {
    /// The call as libdbus received it.
    let call: RawMessage
    /// The call's sender: the reply's destination.
    let destination: String?
    /// The call's serial: the reply's reply serial.
    let replySerial: UInt32

    /// Whether `reply` can be built from the call: a method return or an error whose
    /// destination and reply serial are still the call's.
    func answers(_ reply: DBusMessage) -> Bool {
        (reply.kind == .methodReturn || reply.kind == .error) && reply.replySerial == replySerial
            && reply.destination == destination
    }
}
