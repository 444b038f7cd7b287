internal import CDBus

/// Builds libdbus messages from ``DBusMessage`` values. Everything is validated first
/// (``ValueValidator``); appending then cannot hit one of libdbus's aborting checks.
enum MessageEncoder {
    /// Encodes `message` into a new libdbus message.
    static func encode(_ message: DBusMessage) throws(DBusError) -> RawMessage {
        // A reply whose body was encoded ahead (``ReplyBody``), still as made from the call.
        if let encodedBody = message.encodedBody, let answering = message.answering, answering.answers(message),
            message.kind == .methodReturn, message.path == nil, message.interface == nil, message.member == nil,
            message.errorName == nil, !message.noReplyExpected, !message.autoStart
        {
            return try encodedBody.reply(to: answering)
        }
        // A reply of at most one argument to a received call: built from the call (see
        // ``ReceivedCall``). Several arguments go through ``WireFormat`` below, cheaper still.
        if let answering = message.answering, message.body.count < WireFormat.minimumArguments, answering.answers(message) {
            return try encodeReply(message, answering: answering.call)
        }
        try ValueValidator.validateHeader(message)
        try ValueValidator.validate(body: message.body)

        // Several arguments: marshalled here and handed to libdbus whole (``WireFormat``).
        if message.body.count >= WireFormat.minimumArguments, let pointer = WireFormat.demarshal(message) {
            return RawMessage(owning: pointer)
        }

        // libdbus rewrites the header's signature field after each top-level argument, and
        // replacing it costs more the more fields the header already holds (a `Changed`
        // signal of 4 arguments about a third less with its body appended to an empty
        // header, callgrind). So a body of two or more arguments goes in first;
        // a shorter one after the fields, which calls and signals get from their constructor.
        let bodyFirst = message.body.count >= 2
        guard let pointer = bodyFirst ? dbus_message_new(messageType(message.kind)) : newMessage(message) else {
            throw DBusError(code: .outOfMemory)
        }
        let raw = RawMessage(owning: pointer)
        if bodyFirst { try appendBody(message.body, to: pointer) }

        // Fields the constructor did not set. Each dbus_message_set_* rewrites the header
        // and walks all its fields again.
        let constructed = !bodyFirst && (message.kind == .methodCall || message.kind == .signal)
        func set(_ value: String?, _ setter: (OpaquePointer, UnsafePointer<CChar>) -> dbus_bool_t) throws(DBusError) {
            guard let value else { return }
            if value.withCString({ setter(pointer, $0) }) == 0 { throw DBusError(code: .outOfMemory) }
        }
        if !constructed {
            try set(message.path) { dbus_message_set_path($0, $1) }
            try set(message.interface) { dbus_message_set_interface($0, $1) }
            try set(message.member) { dbus_message_set_member($0, $1) }
        }
        try set(message.errorName) { dbus_message_set_error_name($0, $1) }
        if !constructed || message.kind != .methodCall { try set(message.destination) { dbus_message_set_destination($0, $1) } }
        if let replySerial = message.replySerial, dbus_message_set_reply_serial(pointer, replySerial) == 0 {
            throw DBusError(code: .outOfMemory)
        }
        dbus_message_set_no_reply(pointer, message.noReplyExpected ? 1 : 0)
        dbus_message_set_auto_start(pointer, message.autoStart ? 1 : 0)

        if !bodyFirst { try appendBody(message.body, to: pointer) }
        return raw
    }

    /// Encodes `message`, a method return or error whose destination and reply serial are
    /// those of `call`, with libdbus's constructors for replies: the header's destination,
    /// reply serial (and error name) are written in one go. The destination is not checked
    /// again: it is the call's sender, which libdbus validated when it received the call.
    static func encodeReply(_ message: DBusMessage, answering call: RawMessage) throws(DBusError) -> RawMessage {
        try ValueValidator.validateHeader(message, checkingDestination: false)
        try ValueValidator.validate(body: message.body)
        let made: OpaquePointer?
        switch message.kind {
        case .error:
            // The validator made sure an error has a valid name.
            made = (message.errorName ?? "").withCString { dbus_message_new_error(call.pointer, $0, nil) }
        case .methodReturn:
            made = dbus_message_new_method_return(call.pointer)
        case .methodCall, .signal:
            throw .invalidMessage("only a method return or an error can answer a call")
        }
        guard let pointer = made else { throw DBusError(code: .outOfMemory) }
        let raw = RawMessage(owning: pointer)
        // Fields a reply does not usually carry, set only when a caller gave them.
        func set(_ value: String?, _ setter: (OpaquePointer, UnsafePointer<CChar>) -> dbus_bool_t) throws(DBusError) {
            guard let value else { return }
            if value.withCString({ setter(pointer, $0) }) == 0 { throw DBusError(code: .outOfMemory) }
        }
        try set(message.path) { dbus_message_set_path($0, $1) }
        try set(message.interface) { dbus_message_set_interface($0, $1) }
        try set(message.member) { dbus_message_set_member($0, $1) }
        // libdbus's constructors set NO_REPLY_EXPECTED on replies; the flags are the message's.
        dbus_message_set_no_reply(pointer, message.noReplyExpected ? 1 : 0)
        dbus_message_set_auto_start(pointer, message.autoStart ? 1 : 0)
        try appendBody(message.body, to: pointer)
        return raw
    }

    /// Appends the validated `body` to the new message `pointer`.
    static func appendBody(_ body: [DBusValue], to pointer: OpaquePointer) throws(DBusError) {
        guard !body.isEmpty else { return }
        let ok = withUnsafeTemporaryAllocation(of: DBusMessageIter.self, capacity: 1) { buffer in
            let iter = buffer.baseAddress!
            iter.initialize(to: DBusMessageIter())
            dbus_message_iter_init_append(pointer, iter)
            for value in body where !append(value, to: iter) { return false }
            return true
        }
        if !ok { throw DBusError(code: .outOfMemory) }
    }

    /// libdbus's type code of `kind`.
    private static func messageType(_ kind: DBusMessage.Kind) -> Int32 {
        switch kind {
        case .methodCall: CDBUS_MESSAGE_TYPE_METHOD_CALL
        case .methodReturn: CDBUS_MESSAGE_TYPE_METHOD_RETURN
        case .error: CDBUS_MESSAGE_TYPE_ERROR
        case .signal: CDBUS_MESSAGE_TYPE_SIGNAL
        }
    }

    /// A new libdbus message of the kind of `message`: calls and signals with their header
    /// fields written in one go (`dbus_message_new_method_call`, `dbus_message_new_signal`),
    /// replies empty. Nil when out of memory. The header must have been validated.
    private static func newMessage(_ message: DBusMessage) -> OpaquePointer? {
        switch message.kind {
        case .methodCall:
            return withOptionalCString(message.destination) { destination in
                withOptionalCString(message.path) { path in
                    withOptionalCString(message.interface) { interface in
                        withOptionalCString(message.member) { member in
                            dbus_message_new_method_call(destination, path, interface, member)
                        }
                    }
                }
            }
        case .signal:
            return withOptionalCString(message.path) { path in
                withOptionalCString(message.interface) { interface in
                    withOptionalCString(message.member) { member in dbus_message_new_signal(path, interface, member) }
                }
            }
        case .methodReturn: return dbus_message_new(CDBUS_MESSAGE_TYPE_METHOD_RETURN)
        case .error: return dbus_message_new(CDBUS_MESSAGE_TYPE_ERROR)
        }
    }

    /// Calls `body` with a C string of `value`, or with nil.
    private static func withOptionalCString<T>(_ value: String?, _ body: (UnsafePointer<CChar>?) -> T) -> T {
        guard let value else { return body(nil) }
        return value.withCString { body($0) }
    }

    /// Appends one validated value; false when libdbus ran out of memory (containers opened here
    /// are abandoned so the message stays consistent).
    private static func append(_ value: DBusValue, to iter: UnsafeMutablePointer<DBusMessageIter>) -> Bool {
        switch value {
        case .byte(let v): return basic(CDBUS_TYPE_BYTE, v, iter)
        case .boolean(let v): return basic(CDBUS_TYPE_BOOLEAN, dbus_bool_t(v ? 1 : 0), iter)
        case .int16(let v): return basic(CDBUS_TYPE_INT16, v, iter)
        case .uint16(let v): return basic(CDBUS_TYPE_UINT16, v, iter)
        case .int32(let v): return basic(CDBUS_TYPE_INT32, v, iter)
        case .uint32(let v): return basic(CDBUS_TYPE_UINT32, v, iter)
        case .int64(let v): return basic(CDBUS_TYPE_INT64, v, iter)
        case .uint64(let v): return basic(CDBUS_TYPE_UINT64, v, iter)
        case .double(let v): return basic(CDBUS_TYPE_DOUBLE, v, iter)
        case .string(let s): return string(CDBUS_TYPE_STRING, s, iter)
        case .objectPath(let s): return string(CDBUS_TYPE_OBJECT_PATH, s, iter)
        case .signature(let s): return string(CDBUS_TYPE_SIGNATURE, s, iter)
        case .unixFD: return false  // refused by the validator
        case .bytes(let bytes): return byteArray(bytes, iter)
        case .array(let element, let items):
            if element.rawValue == "y" {
                var bytes: [UInt8] = []
                bytes.reserveCapacity(items.count)
                for case .byte(let b) in items { bytes.append(b) }
                return byteArray(bytes, iter)
            }
            return container(CDBUS_TYPE_ARRAY, element.rawValue, iter) { sub in
                for item in items where !append(item, to: sub) { return false }
                return true
            }
        case .dictEntry(let key, let entryValue):
            return container(CDBUS_TYPE_DICT_ENTRY, nil, iter) { sub in
                append(key, to: sub) && append(entryValue, to: sub)
            }
        case .structure(let fields):
            return container(CDBUS_TYPE_STRUCT, nil, iter) { sub in
                for field in fields where !append(field, to: sub) { return false }
                return true
            }
        case .variant(let inner):
            return container(CDBUS_TYPE_VARIANT, inner.signatureText, iter) { sub in
                append(inner, to: sub)
            }
        }
    }

    private static func basic<T>(_ type: Int32, _ value: T, _ iter: UnsafeMutablePointer<DBusMessageIter>) -> Bool {
        withUnsafePointer(to: value) { dbus_message_iter_append_basic(iter, type, $0) != 0 }
    }

    private static func string(_ type: Int32, _ value: String, _ iter: UnsafeMutablePointer<DBusMessageIter>) -> Bool {
        value.withCString { cString in
            withUnsafePointer(to: cString) { dbus_message_iter_append_basic(iter, type, $0) != 0 }
        }
    }

    private static func byteArray(_ bytes: [UInt8], _ iter: UnsafeMutablePointer<DBusMessageIter>) -> Bool {
        container(CDBUS_TYPE_ARRAY, "y", iter) { sub in
            bytes.withUnsafeBufferPointer { buffer in
                // libdbus wants a pointer to the pointer; an empty array still needs a non-nil one.
                let base = buffer.baseAddress ?? UnsafePointer(bitPattern: 1)
                return withUnsafePointer(to: base) {
                    dbus_message_iter_append_fixed_array(sub, CDBUS_TYPE_BYTE, $0, Int32(bytes.count)) != 0
                }
            }
        }
    }

    private static func container(
        _ type: Int32, _ contained: String?, _ iter: UnsafeMutablePointer<DBusMessageIter>,
        _ body: (UnsafeMutablePointer<DBusMessageIter>) -> Bool
    ) -> Bool {
        withUnsafeTemporaryAllocation(of: DBusMessageIter.self, capacity: 1) { buffer in
            let sub = buffer.baseAddress!
            sub.initialize(to: DBusMessageIter())
            let opened: dbus_bool_t
            if let contained {
                opened = contained.withCString { dbus_message_iter_open_container(iter, type, $0, sub) }
            } else {
                opened = dbus_message_iter_open_container(iter, type, nil, sub)
            }
            guard opened != 0 else { return false }
            guard body(sub) else {
                dbus_message_iter_abandon_container(iter, sub)
                return false
            }
            return dbus_message_iter_close_container(iter, sub) != 0
        }
    }
}
