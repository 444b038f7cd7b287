internal import CDBus

// The connection's one filter: it sees every incoming message during dispatch (on the queue),
// passes signals to the signal handler and turns org.freedesktop.DBus.Local.Disconnected into
// one call of the disconnect handler. It never consumes a message.

private let filterMessage: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> DBusHandlerResult = {
    _, message, data in
    guard let message, let core = core(from: data) else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    core.filter(message)
    return DBUS_HANDLER_RESULT_NOT_YET_HANDLED
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

    fileprivate func filter(_ message: OpaquePointer) {
        guard dbus_message_get_type(message) == CDBUS_MESSAGE_TYPE_SIGNAL else { return }
        if dbus_message_is_signal(message, DBUS_INTERFACE_LOCAL, "Disconnected") != 0,
            dbus_message_has_path(message, DBUS_PATH_LOCAL) != 0
        {
            let handler = state.withLock { state -> (@Sendable () -> Void)? in
                state.lost = true
                defer { state.disconnectHandler = nil }
                return state.disconnectHandler
            }
            handler?()
            // Calls still waiting now would wait forever: libdbus completes those it
            // tracks before Disconnected, but a call sent while the loss was in flight
            // keeps waiting on a timeout that a lost connection no longer runs.
            queue.async { [self] in failPendingCalls() }
            return
        }
        guard let handler = state.withLock({ $0.signalHandler }) else { return }
        // A signal we cannot decode is dropped: nobody could answer it anyway.
        guard let decoded = try? MessageDecoder.decode(message, valueBudget: MessageDecoder.maximumIncomingValueCount)
        else { return }
        handler(decoded)
    }
}
