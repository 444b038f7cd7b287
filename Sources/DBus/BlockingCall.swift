import Dispatch
import Synchronization

extension DBusConnection {
    /// Sends a method call and calls `completion` once with its reply or failure, on the
    /// connection's queue (or at once on the caller's thread when the connection is closed).
    /// Calls and sends made from one thread go out in the order they were made.
    public func call(
        _ message: DBusMessage, timeout: Duration = .seconds(25),
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        startCall(message, timeout: timeout, now: false, completion: completion)
    }

    /// Encodes and sends; `now` sends from the calling thread (``ConnectionCore/sendCall(_:timeout:completion:)``),
    /// else from the queue.
    func startCall(
        _ message: DBusMessage, timeout: Duration, now: Bool,
        completion: @escaping @Sendable (Result<DBusMessage, DBusError>) -> Void
    ) {
        guard message.kind == .methodCall else {
            return completion(.failure(.invalidMessage("only method calls can be sent with call(); use send()")))
        }
        var message = message
        message.noReplyExpected = false
        do {
            let raw = try MessageEncoder.encode(message)
            if now {
                core.sendCall(raw, timeout: Self.milliseconds(timeout), completion: completion)
            } else {
                core.startCall(raw, timeout: Self.milliseconds(timeout), completion: completion)
            }
        } catch {
            completion(.failure(error))
        }
    }

    /// Sends a method call and blocks the calling thread until the reply arrives, for
    /// callers that cannot suspend (a synchronous getter loading its cache).
    ///
    /// Never call it from one of the connection's own handlers: the reply is read on that
    /// queue, so the call would wait for itself. That case throws `.invalidMessage`
    /// instead of deadlocking.
    public func callBlocking(_ message: DBusMessage, timeout: Duration = .seconds(25)) throws(DBusError) -> DBusMessage {
        if core.isOnQueue {
            throw .invalidMessage("a blocking call cannot be made from the connection's own queue; use the async call(_:timeout:)")
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = ResultBox()
        // Sent from this thread: it waits anyway, so no other thread needs waking to send.
        startCall(message, timeout: timeout, now: true) { result in
            outcome.set(result)
            done.signal()
        }
        done.wait()
        return try outcome.get()
    }
}

/// Carries a call's result from the connection's queue to the blocked caller.
private final class ResultBox: Sendable {
    private let result = Mutex<Result<DBusMessage, DBusError>?>(nil)

    func set(_ value: Result<DBusMessage, DBusError>) { result.withLock { $0 = value } }

    func get() throws(DBusError) -> DBusMessage {
        guard let value = result.withLock({ $0 }) else { throw DBusError(code: .disconnected) }
        return try value.get()
    }
}
