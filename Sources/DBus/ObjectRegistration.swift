internal import CDBus

/// The handler of one registered object path, kept alive by libdbus until unregistration.
final class ObjectHandlerBox: Sendable {
    /// Receives every decodable method call to the path, on the connection queue.
    let handler: @Sendable (DBusMessage) -> Void
    /// The header strings of the path's calls, reused from one call to the next.
    let strings = HeaderStrings()

    init(handler: @escaping @Sendable (DBusMessage) -> Void) {
        self.handler = handler
    }
}

private let objectMessage: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> DBusHandlerResult = {
    connection, message, data in
    guard let connection, let message, let data,
        dbus_message_get_type(message) == CDBUS_MESSAGE_TYPE_METHOD_CALL
    else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    let box = Unmanaged<ObjectHandlerBox>.fromOpaque(data).takeUnretainedValue()
    let decoded: DBusMessage
    do throws(DBusError) {
        decoded = try ReceivedCall.decode(message, valueBudget: MessageDecoder.maximumIncomingValueCount, strings: box.strings)
    } catch {
        // Answered here: the handler never sees a body it could not read.
        let name: String
        if case .limitsExceeded = error { name = DBUS_ERROR_LIMITS_EXCEEDED } else { name = DBUS_ERROR_INVALID_ARGS }
        if dbus_message_get_no_reply(message) == 0,
            let reply = dbus_message_new_error(message, name, error.description)
        {
            _ = dbus_connection_send(connection, reply, nil)
            dbus_message_unref(reply)
        }
        return DBUS_HANDLER_RESULT_HANDLED
    }
    box.handler(decoded)
    return DBUS_HANDLER_RESULT_HANDLED
}

private let objectUnregister: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    _, data in
    guard let data else { return }
    Unmanaged<ObjectHandlerBox>.fromOpaque(data).release()
}

extension ConnectionCore {
    /// Registers `handler` for method calls to exactly `path`.
    func registerObject(path: String, handler: @escaping @Sendable (DBusMessage) -> Void) throws(DBusError) {
        if let reason = validationFailure(path, { dbus_validate_path($0, $1) }) {
            throw .invalidMessage("\"\(path)\" is not a valid object path: \(reason)")
        }
        let box = ObjectHandlerBox(handler: handler)
        try performOnQueue { () throws(DBusError) in
            guard let connection = liveConnection else { throw DBusError(code: .disconnected) }
            var vtable = DBusObjectPathVTable()
            vtable.message_function = objectMessage
            vtable.unregister_function = objectUnregister
            let data = Unmanaged.passRetained(box).toOpaque()
            let error = CErrorBox()
            let ok = path.withCString {
                dbus_connection_try_register_object_path(connection.pointer, $0, &vtable, data, error.pointer)
            }
            if ok == 0 {
                Unmanaged<ObjectHandlerBox>.fromOpaque(data).release()
                if error.isSet {
                    throw .remote(name: error.name, message: error.message)
                }
                throw DBusError(code: .outOfMemory)
            }
        }
    }
}
