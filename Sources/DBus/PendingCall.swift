internal import CDBus
import Dispatch

// Method calls waiting for replies. The connection keeps its own table of them by serial
// instead of libdbus's DBusPendingCall: a libdbus pending call builds its NoReply error
// message in advance and adds a libdbus timeout (here a DispatchSource timer, armed and
// cancelled) for every call, which together cost more than the rest of the client's side of
// a round trip. Here the filter (MessageFilter.swift) hands each reply to its call during
// dispatch, on the queue, and ONE timer per connection, armed for the earliest deadline,
// fails the calls whose time is up.

/// A call waiting for its reply.
struct PendingReply: Sendable {
    /// When it fails with NoReply.
    let deadline: DispatchTime
    /// Resumes the caller; called exactly once.
    let completion: @Sendable (Result<DBusMessage, DBusError>) -> Void
}

/// The connection's deadline timer.
///
/// `@unchecked Sendable` only because the Dispatch overlay does not mark its source
/// existentials Sendable: libdispatch objects are thread-safe. It is only scheduled with the
/// core's mutex held, together with ``CoreState/replyDeadline``.
struct ReplyTimer: @unchecked Sendable {
    /// Fires at the earliest deadline of the calls waiting (never while none wait).
    let timer: any DispatchSourceTimer
}

extension ConnectionCore {
    /// The error a call gets when no reply came in time, in libdbus's words.
    static let noReply = DBusError.remote(
        name: "org.freedesktop.DBus.Error.NoReply",
        message:
            "Did not receive a reply. Possible causes include: the remote application did not send a reply, the message bus security policy blocked the reply, the reply timeout expired, or the network connection was broken."
    )

    /// Sends `message` expecting a reply within `timeout` milliseconds, from the queue;
    /// returns at once. `completion` runs once, on the queue (or at once on the caller's
    /// thread when the connection is already closed).
    func startCall(
        _ message: RawMessage, timeout: Int32,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        let open = state.withLock { state -> Bool in
            guard !state.closed && !state.lost else { return false }
            state.queuedSends += 1
            return true
        }
        guard open else { return completion(.failure(DBusError(code: .disconnected))) }
        queue.async { [self] in
            state.withLock { $0.queuedSends -= 1 }
            guard let connection = liveConnection else { return completion(.failure(DBusError(code: .disconnected))) }
            send(message, on: connection, timeout: timeout, completion: completion)
        }
    }

    /// Like ``startCall(_:timeout:completion:)``, but sends from the calling thread, which
    /// then waits for the reply (``DBusConnection/callBlocking(_:timeout:)``): no thread is
    /// woken to send it. `completion` runs on the queue, or on this thread when the call
    /// fails before it is sent or its reply was read before this returned.
    ///
    /// This is the one libdbus call made off the queue, and it is safe: `connect` calls
    /// `dbus_threads_init_default`, after which libdbus locks the connection itself and
    /// `dbus_connection_send` may be called from any thread while the queue reads and
    /// dispatches (it writes at once when it gets libdbus's I/O path, else leaves the message
    /// queued for the write watch, on the queue). The callbacks it may run here (watch
    /// toggles, dispatch status) only take our mutexes and call thread-safe libdispatch. We
    /// hold our own reference to the libdbus connection while sending, so a concurrent
    /// ``close()`` cannot free it under us. Dispatch stays on the queue alone.
    ///
    /// The order of one thread's calls and sends is kept: while a call of the completion
    /// form (or a send behind one) is still queued, this call is queued behind it
    /// (``startCall(_:timeout:completion:)``); ``enqueueSend(_:)`` follows the same rule.
    func sendCall(
        _ message: RawMessage, timeout: Int32,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        enum Route {
            case closed, queue
            case direct(UnsafeHandle)
        }
        let route = state.withLock { state -> Route in
            guard !state.closed && !state.lost, let connection = state.connection else { return .closed }
            guard state.queuedSends == 0 else { return .queue }
            state.sendsInFlight += 1
            // Our own reference, taken while the core's is still held (an atomic increment, no
            // lock of libdbus): a concurrent finishClose() drops only its own.
            dbus_connection_ref(connection.pointer)
            return .direct(connection)
        }
        switch route {
        case .closed: return completion(.failure(DBusError(code: .disconnected)))
        case .queue: return startCall(message, timeout: timeout, completion: completion)
        case .direct(let connection):
            send(message, on: connection, timeout: timeout, direct: true, completion: completion)
            dbus_connection_unref(connection.pointer)
        }
    }

    /// Sends and records the call.
    private func send(
        _ message: RawMessage, on connection: UnsafeHandle, timeout: Int32, direct: Bool = false,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        var serial: dbus_uint32_t = 0
        // libdbus drops messages sent on a disconnected connection without saying so.
        let connected = dbus_connection_get_is_connected(connection.pointer) != 0
        let sent = connected && dbus_connection_send(connection.pointer, message.pointer, &serial) != 0
        let deadline = DispatchTime.now() + .milliseconds(Int(max(timeout, 0)))
        enum Outcome {
            case waiting
            case answered(RawMessage)
            case failed(DBusError)
        }
        let (outcome, dropped) = state.withLock { state -> (Outcome, [UInt32: RawMessage]) in
            var dropped: [UInt32: RawMessage] = [:]
            if direct {
                state.sendsInFlight -= 1
                // Replies kept for calls being sent: once none is, the rest answer nobody.
                if state.sendsInFlight == 0 { swap(&dropped, &state.earlyReplies) }
            }
            guard sent else { return (.failed(DBusError(code: connected ? .outOfMemory : .disconnected)), dropped) }
            if let reply = state.earlyReplies.removeValue(forKey: serial) ?? dropped.removeValue(forKey: serial) {
                return (.answered(reply), dropped)
            }
            // Closed or lost meanwhile: no reply will come and nobody else would fail the call.
            guard state.connection != nil, !state.lost else { return (.failed(DBusError(code: .disconnected)), dropped) }
            state.pendingCalls[serial] = PendingReply(deadline: deadline, completion: completion)
            if state.replyDeadline.map({ deadline < $0 }) ?? true {
                // Under the mutex, so that the timer's deadline always matches replyDeadline.
                state.replyDeadline = deadline
                replyTimer.timer.schedule(deadline: deadline, leeway: .milliseconds(1))
            }
            return (.waiting, dropped)
        }
        _ = dropped  // released here, outside the mutex
        switch outcome {
        case .waiting: break
        case .answered(let reply): completion(Self.result(ofReply: reply.pointer))
        case .failed(let error): completion(.failure(error))
        }
    }

    /// Completes the call `reply` answers; true when the reply was ours (completed, or kept
    /// for a call whose sender has not recorded it yet). On the queue, during dispatch.
    func completeCall(answeredBy reply: OpaquePointer) -> Bool {
        let serial = dbus_message_get_reply_serial(reply)
        guard serial != 0 else { return false }
        enum Match {
            case call(PendingReply)
            case maybeEarly, none
        }
        let match = state.withLock { state -> Match in
            if let call = state.pendingCalls.removeValue(forKey: serial) { return .call(call) }
            return state.sendsInFlight > 0 ? .maybeEarly : .none
        }
        switch match {
        case .none:
            return false
        case .call(let call):
            call.completion(Self.result(ofReply: reply))
            return true
        case .maybeEarly:
            // A call sent from another thread may be answered before its sender recorded it.
            guard let reference = dbus_message_ref(reply) else { return false }
            let kept = RawMessage(owning: reference)
            let call = state.withLock { state -> PendingReply? in
                if let call = state.pendingCalls.removeValue(forKey: serial) { return call }
                if state.sendsInFlight > 0 { state.earlyReplies[serial] = kept }
                return nil
            }
            call?.completion(Self.result(ofReply: reply))
            return true
        }
    }

    /// The timer fired: fails the calls whose deadline has passed and arms the timer for the
    /// next one. On the queue.
    func expireCalls() {
        let now = DispatchTime.now()
        let expired = state.withLock { state -> [PendingReply] in
            let due = state.pendingCalls.filter { $0.value.deadline <= now }
            for serial in due.keys { state.pendingCalls.removeValue(forKey: serial) }
            state.replyDeadline = state.pendingCalls.values.map(\.deadline).min()
            replyTimer.timer.schedule(deadline: state.replyDeadline ?? .distantFuture, leeway: .milliseconds(1))
            return Array(due.values)
        }
        for call in expired { call.completion(.failure(Self.noReply)) }
    }

    /// Fails every call still waiting; used when closing and when the connection is lost.
    func failPendingCalls() {
        let leftovers = state.withLock { state in
            defer {
                state.pendingCalls = [:]
                state.replyDeadline = nil
            }
            return Array(state.pendingCalls.values)
        }
        for call in leftovers { call.completion(.failure(DBusError(code: .disconnected))) }
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
