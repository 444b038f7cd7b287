internal import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// Turns received libdbus messages into ``DBusMessage`` values.
enum MessageDecoder {
    /// Containers (arrays, structs, dict entries, variants) nested deeper than this are refused.
    static let maximumDepth = 64

    /// The most values (every basic value, container and variant counts one; a byte array
    /// counts one) decoded from one message a peer sent us unasked: a method call to a
    /// registered object or a signal.
    ///
    /// A message may be as large as the protocol's 128 MiB, and one made of tiny elements
    /// (an `as` of empty strings, an `av` of bytes) would take gigabytes as Swift values.
    /// Decoding stops with ``DBusError/limitsExceeded(_:)`` as soon as the count passes
    /// this, so at most this many values are ever built from such a message. No legitimate
    /// call needs as many: a preferences value is at most 1 MiB.
    static let maximumIncomingValueCount = 1 << 20

    /// Decodes header and body of a message the caller keeps owning.
    ///
    /// - Parameter valueBudget: the most values the body may hold (see
    ///   ``maximumIncomingValueCount``); `nil` for no limit (replies to our own calls).
    /// - Parameter strings: header strings to reuse when this message carries the same
    ///   (see ``HeaderStrings``); nil to make every one anew.
    /// - Parameter keepingCall: whether a method call that waits for a reply keeps a
    ///   reference to `pointer` (see ``ReceivedCall``).
    static func decode(
        _ pointer: OpaquePointer, valueBudget: Int? = nil, strings: HeaderStrings? = nil, keepingCall: Bool = false
    ) throws(DBusError) -> DBusMessage {
        let kind: DBusMessage.Kind
        switch dbus_message_get_type(pointer) {
        case CDBUS_MESSAGE_TYPE_METHOD_CALL: kind = .methodCall
        case CDBUS_MESSAGE_TYPE_METHOD_RETURN: kind = .methodReturn
        case CDBUS_MESSAGE_TYPE_ERROR: kind = .error
        case CDBUS_MESSAGE_TYPE_SIGNAL: kind = .signal
        default: throw .invalidArguments("the message has an unknown type")
        }
        let replySerial = dbus_message_get_reply_serial(pointer)
        func header(_ value: UnsafePointer<CChar>?, _ field: HeaderStrings.Field) -> String? {
            strings.map { $0.string(value, field) } ?? string(value)
        }
        let body = try decodeBody(pointer, valueBudget: valueBudget)
        var message = DBusMessage(
            kind: kind,
            serial: dbus_message_get_serial(pointer),
            replySerial: replySerial == 0 ? nil : replySerial,
            path: header(dbus_message_get_path(pointer), .path),
            interface: header(dbus_message_get_interface(pointer), .interface),
            member: header(dbus_message_get_member(pointer), .member),
            // Only error replies carry an error name.
            errorName: kind == .error ? string(dbus_message_get_error_name(pointer)) : nil,
            destination: header(dbus_message_get_destination(pointer), .destination),
            sender: header(dbus_message_get_sender(pointer), .sender),
            noReplyExpected: dbus_message_get_no_reply(pointer) != 0,
            autoStart: dbus_message_get_auto_start(pointer) != 0,
            body: body)
        // libdbus refuses to load a message of serial 0, so a received call always has one
        // a reply may name. Set here, on the message as made, so it is not copied again.
        if keepingCall, kind == .methodCall, !message.noReplyExpected, message.serial != 0 {
            message.received = RawMessage(owning: dbus_message_ref(pointer))
        }
        return message
    }

    /// Counts the values decoded from one message against its budget.
    private struct Budget {
        /// Values that may still be decoded; `Int.max` for no limit.
        var remaining: Int
        /// The budget it started with, for the error message.
        let total: Int

        /// Takes one value, or throws once the budget is spent.
        mutating func take() throws(DBusError) {
            guard remaining > 0 else {
                throw .limitsExceeded("the message holds more than \(total) values")
            }
            remaining -= 1
        }
    }

    /// Decodes only the body.
    static func decodeBody(_ pointer: OpaquePointer, valueBudget: Int? = nil) throws(DBusError) -> [DBusValue] {
        // The iterator lives on the stack: no heap allocation per message.
        var storage = DBusMessageIter()
        return try withUnsafeMutablePointer(to: &storage) { iter throws(DBusError) -> [DBusValue] in
            guard dbus_message_iter_init(pointer, iter) != 0 else { return [] }
            var budget = Budget(remaining: max(valueBudget ?? Int.max, 0), total: valueBudget ?? Int.max)
            var values: [DBusValue] = []
            while dbus_message_iter_get_arg_type(iter) != CDBUS_TYPE_INVALID {
                values.append(try decodeValue(iter, depth: 0, budget: &budget))
                dbus_message_iter_next(iter)
            }
            return values
        }
    }

    private static func string(_ pointer: UnsafePointer<CChar>?) -> String? {
        pointer.map { String(cString: $0) }
    }

    private static func basic<T>(_ iter: UnsafeMutablePointer<DBusMessageIter>, _ initial: T) -> T {
        var value = initial
        withUnsafeMutablePointer(to: &value) { dbus_message_iter_get_basic(iter, $0) }
        return value
    }

    private static func basicString(_ iter: UnsafeMutablePointer<DBusMessageIter>) -> String {
        var pointer: UnsafePointer<CChar>? = nil
        withUnsafeMutablePointer(to: &pointer) { dbus_message_iter_get_basic(iter, $0) }
        return pointer.map { String(cString: $0) } ?? ""
    }

    /// The signature of the value the iterator points at.
    private static func currentSignature(_ iter: UnsafeMutablePointer<DBusMessageIter>) throws(DBusError) -> String {
        guard let cString = dbus_message_iter_get_signature(iter) else { throw DBusError(code: .outOfMemory) }
        defer { dbus_free(cString) }
        return String(cString: cString)
    }

    private static func decodeValue(
        _ iter: UnsafeMutablePointer<DBusMessageIter>, depth: Int, budget: inout Budget
    ) throws(DBusError) -> DBusValue {
        try budget.take()
        let type = dbus_message_iter_get_arg_type(iter)
        switch type {
        case CDBUS_TYPE_BYTE: return .byte(basic(iter, UInt8(0)))
        case CDBUS_TYPE_BOOLEAN: return .boolean(basic(iter, dbus_bool_t(0)) != 0)
        case CDBUS_TYPE_INT16: return .int16(basic(iter, Int16(0)))
        case CDBUS_TYPE_UINT16: return .uint16(basic(iter, UInt16(0)))
        case CDBUS_TYPE_INT32: return .int32(basic(iter, Int32(0)))
        case CDBUS_TYPE_UINT32: return .uint32(basic(iter, UInt32(0)))
        case CDBUS_TYPE_INT64: return .int64(basic(iter, Int64(0)))
        case CDBUS_TYPE_UINT64: return .uint64(basic(iter, UInt64(0)))
        case CDBUS_TYPE_DOUBLE: return .double(basic(iter, Double(0)))
        case CDBUS_TYPE_STRING: return .string(basicString(iter))
        case CDBUS_TYPE_OBJECT_PATH: return .objectPath(basicString(iter))
        case CDBUS_TYPE_SIGNATURE: return .signature(basicString(iter))
        case CDBUS_TYPE_UNIX_FD:
            // libdbus hands us a duplicate we own: close it at once.
            let fd = basic(iter, Int32(-1))
            if fd >= 0 { _ = close(fd) }
            return .unixFD
        case CDBUS_TYPE_ARRAY, CDBUS_TYPE_STRUCT, CDBUS_TYPE_DICT_ENTRY, CDBUS_TYPE_VARIANT:
            guard depth < maximumDepth else {
                throw .invalidArguments("containers are nested more than \(maximumDepth) deep")
            }
            return try decodeContainer(type, iter, depth: depth + 1, budget: &budget)
        default:
            throw .invalidArguments("the body holds a value of unknown type code \(type)")
        }
    }

    private static func decodeContainer(
        _ type: Int32, _ iter: UnsafeMutablePointer<DBusMessageIter>, depth: Int, budget: inout Budget
    ) throws(DBusError) -> DBusValue {
        let arraySignature = type == CDBUS_TYPE_ARRAY ? try currentSignature(iter) : ""
        let sub = UnsafeMutablePointer<DBusMessageIter>.allocate(capacity: 1)
        sub.initialize(to: DBusMessageIter())
        defer { sub.deallocate() }
        dbus_message_iter_recurse(iter, sub)

        if type == CDBUS_TYPE_ARRAY && dbus_message_iter_get_element_type(iter) == CDBUS_TYPE_BYTE {
            var base: UnsafeRawPointer? = nil
            var count: Int32 = 0
            withUnsafeMutablePointer(to: &base) { dbus_message_iter_get_fixed_array(sub, $0, &count) }
            guard count > 0, let base else { return .bytes([]) }
            return .bytes(Array(UnsafeRawBufferPointer(start: base, count: Int(count))))
        }

        var items: [DBusValue] = []
        while dbus_message_iter_get_arg_type(sub) != CDBUS_TYPE_INVALID {
            items.append(try decodeValue(sub, depth: depth, budget: &budget))
            dbus_message_iter_next(sub)
        }

        switch type {
        case CDBUS_TYPE_ARRAY:
            return .array(element: DBusSignature(unchecked: String(arraySignature.dropFirst())), items)
        case CDBUS_TYPE_STRUCT:
            return .structure(items)
        case CDBUS_TYPE_DICT_ENTRY:
            guard items.count == 2 else { throw .invalidArguments("a dictionary entry does not hold two values") }
            return .dictEntry(items[0], items[1])
        default:
            guard items.count == 1 else { throw .invalidArguments("a variant does not hold one value") }
            return .variant(items[0])
        }
    }
}
