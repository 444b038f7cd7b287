internal import CDBus

// The connection's one filter: it sees every incoming message during dispatch (on the queue),
// hands method calls to the objects registered for their paths and replies to the calls
// waiting for them (consuming those), passes signals to the signal handler and turns
// org.freedesktop.DBus.Local.Disconnected into one call of the disconnect handler.

private let filterMessage: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> DBusHandlerResult = {
    connection, message, data in
    guard let connection, let message, let core = core(from: data) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    return core.filter(message, on: connection) ? DBUS_HANDLER_RESULT_HANDLED : DBUS_HANDLER_RESULT_NOT_YET_HANDLED
}

extension ConnectionCore {
    /// Adds the filter; false when out of memory.
    func installFilter(on connection: OpaquePointer) -> Bool {
        let data = retainedPointer()
        guard dbus_connection_add_filter(connection, filterMessage, data, releaseCore) != 0 else {
            Unmanaged<ConnectionCore>.fromOpaque(data).release()
            return false
        }
        return true
    }

    /// True when the message was handled: a reply to a waiting call, now completed, or a
    /// method call to a registered object, handed to it.
    fileprivate func filter(_ message: OpaquePointer, on connection: OpaquePointer) -> Bool {
        let type = dbus_message_get_type(message)
        if type == CDBUS_MESSAGE_TYPE_METHOD_CALL {
            guard let (object, observer) = objectHandler(for: message) else { return false }
            observer?()
            object.handle(message, on: connection, of: self)
            return true
        }
        if type == CDBUS_MESSAGE_TYPE_METHOD_RETURN || type == CDBUS_MESSAGE_TYPE_ERROR {
            return completeCall(answeredBy: message)
        }
        guard type == CDBUS_MESSAGE_TYPE_SIGNAL else { return false }
        if dbus_message_is_signal(message, DBUS_INTERFACE_LOCAL, "Disconnected") != 0,
            dbus_message_has_path(message, DBUS_PATH_LOCAL) != 0
        {
            let handler = state.withLock { state -> (@Sendable () -> Void)? in
                state.lost = true
                defer { state.disconnectHandler = nil }
                return state.disconnectHandler
            }
            handler?()
            // No reply comes on a lost connection: the calls still waiting fail now
            // (`.disconnected`) rather than at their deadlines.
            queue.async { [self] in failPendingCalls() }
            return false
        }
        guard let handler = state.withLock({ $0.signalHandler }) else { return false }
        // A signal we cannot decode is dropped: nobody could answer it anyway.
        guard let decoded = try? MessageDecoder.decode(message, valueBudget: MessageDecoder.maximumIncomingValueCount)
        else { return false }
        handler(decoded)
        return false
    }
}
