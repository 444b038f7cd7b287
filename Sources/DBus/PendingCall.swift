internal import CDBus

/// What a waiting method call needs when its reply (or its failure) arrives.
final class PendingCallContext: Sendable {
    /// Key in ``CoreState/pendingCalls``.
    let id: Int
    /// The libdbus pending call; we own one reference until the call completes.
    let pending: UnsafeHandle
    /// Resumes the caller; called exactly once.
    let completion: @Sendable (Result<DBusMessage, DBusError>) -> Void
    /// The connection, to forget the call when it completes.
    let core: ConnectionCore

    init(
        id: Int, pending: UnsafeHandle, core: ConnectionCore,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        self.id = id
        self.pending = pending
        self.core = core
        self.completion = completion
    }
}

private let pendingCallNotify: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    _, data in
    guard let data else { return }
    let context = Unmanaged<PendingCallContext>.fromOpaque(data).takeUnretainedValue()
    context.core.completePendingCall(context)
}

private let releaseContext: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
    guard let data else { return }
    Unmanaged<PendingCallContext>.fromOpaque(data).release()
}

extension ConnectionCore {
    /// Sends `message` expecting a reply within `timeout` milliseconds; `completion` runs once,
    /// on the queue (or at once on the caller's thread when the connection is already closed).
    func startCall(
        _ message: RawMessage, timeout: Int32,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        let open = state.withLock { !$0.closed && !$0.lost }
        guard open else { return completion(.failure(.disconnected)) }
        queue.async { [self] in
            guard let connection = liveConnection else { return completion(.failure(.disconnected)) }
            var pendingPointer: OpaquePointer? = nil
            guard dbus_connection_send_with_reply(connection.pointer, message.pointer, &pendingPointer, timeout) != 0
            else { return completion(.failure(.outOfMemory)) }
            // libdbus gives no pending call when the connection is already disconnected.
            guard let pendingPointer else { return completion(.failure(.disconnected)) }
            let context = state.withLock { state -> PendingCallContext in
                defer { state.nextPendingID += 1 }
                let context = PendingCallContext(
                    id: state.nextPendingID, pending: UnsafeHandle(pointer: pendingPointer), core: self,
                    completion: completion)
                state.pendingCalls[context.id] = context
                return context
            }
            let data = Unmanaged.passRetained(context).toOpaque()
            guard dbus_pending_call_set_notify(pendingPointer, pendingCallNotify, data, releaseContext) != 0 else {
                Unmanaged<PendingCallContext>.fromOpaque(data).release()
                state.withLock { _ = $0.pendingCalls.removeValue(forKey: context.id) }
                dbus_pending_call_cancel(pendingPointer)
                dbus_pending_call_unref(pendingPointer)
                return completion(.failure(.outOfMemory))
            }
            // A reply that completed the call before the notify function was set.
            if dbus_pending_call_get_completed(pendingPointer) != 0 {
                completePendingCall(context)
            }
        }
    }

    /// Takes the reply, decodes it and resumes the caller. Does nothing the second time.
    func completePendingCall(_ context: PendingCallContext) {
        let wasPending = state.withLock { $0.pendingCalls.removeValue(forKey: context.id) != nil }
        guard wasPending else { return }
        let pending = context.pending.pointer
        let result: Result<DBusMessage, DBusError>
        if let reply = dbus_pending_call_steal_reply(pending) {
            result = Self.result(ofReply: reply)
            dbus_message_unref(reply)
        } else {
            result = .failure(.disconnected)
        }
        dbus_pending_call_unref(pending)
        context.completion(result)
    }

    /// Fails every call still waiting; used when closing.
    func failPendingCalls() {
        let leftovers = state.withLock { state in
            defer { state.pendingCalls = [:] }
            return Array(state.pendingCalls.values)
        }
        for context in leftovers {
            dbus_pending_call_cancel(context.pending.pointer)
            dbus_pending_call_unref(context.pending.pointer)
            context.completion(.failure(.disconnected))
        }
    }

    private static func result(ofReply reply: OpaquePointer) -> Result<DBusMessage, DBusError> {
        let decoded: DBusMessage
        do {
            decoded = try MessageDecoder.decode(reply)
        } catch {
            if dbus_message_get_type(reply) == CDBUS_MESSAGE_TYPE_ERROR {
                let name = dbus_message_get_error_name(reply).map { String(cString: $0) } ?? ""
                return .failure(.remote(name: name, message: ""))
            }
            return .failure(error)
        }
        if decoded.kind == .error {
            return .failure(.remote(name: decoded.errorName ?? "", message: decoded.errorMessage ?? ""))
        }
        return .success(decoded)
    }
}
