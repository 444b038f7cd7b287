internal import CDBus

#if canImport(Glibc)
    import Glibc
#endif

/// The handler of one registered object path, kept alive by libdbus until unregistration.
final class ObjectHandlerBox: Sendable {
    /// The path, as the C string libdbus gives a message's path.
    private let path: [CChar]
    /// Answers a call before it is decoded, when it can (see ``IncomingCall``).
    let quickAnswer: (@Sendable (borrowing IncomingCall) -> ReplyBody?)?
    /// Receives every decodable method call to the path the quick answer left, on the
    /// connection queue.
    let handler: @Sendable (DBusMessage) -> Void
    /// The header strings of the path's calls, reused from one call to the next.
    let strings = HeaderStrings()

    init(
        path: String, quickAnswer: (@Sendable (borrowing IncomingCall) -> ReplyBody?)?,
        handler: @escaping @Sendable (DBusMessage) -> Void
    ) {
        self.path = Array(path.utf8CString)
        self.quickAnswer = quickAnswer
        self.handler = handler
    }

    /// Whether `path`, a message's, is this object's.
    func isPath(_ path: UnsafePointer<CChar>) -> Bool {
        self.path.withUnsafeBufferPointer { own in own.baseAddress.map { strcmp($0, path) == 0 } ?? false }
    }

    /// Answers `message`, a method call to this object, with the quick answer's body when it
    /// gives one (sent through `core`, when given); else decodes it and hands it to the
    /// handler. A body it cannot read is answered here, with an error.
    func handle(_ message: OpaquePointer, on connection: OpaquePointer, of core: ConnectionCore?) {
        if let core, let quickAnswer, dbus_message_get_no_reply(message) == 0, let body = quickAnswer(IncomingCall(received: message)),
            let reply = try? body.reply(toReceived: message)
        {
            // A reply that cannot be sent (the connection closed) is dropped, as the
            // handler's would be.
            try? core.enqueueSend(reply)
            return
        }
        let decoded: DBusMessage
        do throws(DBusError) {
            decoded = try ReceivedCall.decode(message, valueBudget: MessageDecoder.maximumIncomingValueCount, strings: strings)
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
            return
        }
        handler(decoded)
    }
}

/// libdbus's handler of a registered path. The connection's filter hands the calls of
/// registered paths to their objects before libdbus looks for one (``ConnectionCore/objectHandler(for:)``),
/// so this runs only for a call the filter passed on.
private let objectMessage: @convention(c) (OpaquePointer?, OpaquePointer?, UnsafeMutableRawPointer?) -> DBusHandlerResult = {
    connection, message, data in
    guard let connection, let message, let data,
        dbus_message_get_type(message) == CDBUS_MESSAGE_TYPE_METHOD_CALL
    else { return DBUS_HANDLER_RESULT_NOT_YET_HANDLED }
    // Not offered to the quick answer, which needs the core to send with: decoded and handled.
    Unmanaged<ObjectHandlerBox>.fromOpaque(data).takeUnretainedValue().handle(message, on: connection, of: nil)
    return DBUS_HANDLER_RESULT_HANDLED
}

private let objectUnregister: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    _, data in
    guard let data else { return }
    Unmanaged<ObjectHandlerBox>.fromOpaque(data).release()
}

extension ConnectionCore {
    /// Registers `handler` for method calls to exactly `path`, each first offered to
    /// `quickAnswer` when given.
    func registerObject(
        path: String, quickAnswer: (@Sendable (borrowing IncomingCall) -> ReplyBody?)?,
        handler: @escaping @Sendable (DBusMessage) -> Void
    ) throws(DBusError) {
        if let reason = validationFailure(path, { dbus_validate_path($0, $1) }) {
            throw .invalidMessage("\"\(path)\" is not a valid object path: \(reason)")
        }
        let box = ObjectHandlerBox(path: path, quickAnswer: quickAnswer, handler: handler)
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
            // Registered with libdbus too, which then lists the path when a parent path is
            // introspected.
            state.withLock { $0.objects.append(box) }
        }
    }

    /// The registered object a method call is for, found by its path as libdbus holds it,
    /// and the call observer (``DBusConnection/setCallObserver(_:)``), read under the same lock.
    ///
    /// libdbus finds a call's object by splitting its path into newly allocated components
    /// and walking a tree of them, about a sixth of a `Read`'s cost (callgrind); the
    /// connection's filter, which libdbus runs first, compares the path with the few
    /// registered instead.
    func objectHandler(for message: OpaquePointer) -> (object: ObjectHandlerBox, observer: (@Sendable () -> Void)?)? {
        guard let path = dbus_message_get_path(message) else { return nil }
        return state.withLock { state in state.objects.first { $0.isPath(path) }.map { ($0, state.callObserver) } }
    }
}
