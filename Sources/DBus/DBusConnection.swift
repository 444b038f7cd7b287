internal import CDBus
import StandardExtras

#if canImport(Glibc)
    import Glibc
#endif

/// A private connection to a message bus.
///
/// Every libdbus call on the connection runs on the connection's own serial DispatchQueue,
/// except that ``send(_:)``, ``callBlocking(_:timeout:)`` and the async
/// ``call(_:timeout:)`` hand their message to libdbus from the calling thread. The
/// connection's event thread waits in `poll(2)` for libdbus's socket and runs the reading
/// and dispatching on the queue, on itself when the queue is idle (one thread wakes per
/// incoming message); libdbus's timeouts are DispatchSource timers on the queue. Replies,
/// signals and calls are read and dispatched on the queue only. Handlers registered here run
/// on that queue and must not block.
/// Call ``close()`` when done: handlers that capture the connection keep it alive.
public final class DBusConnection: Sendable {
    let core: ConnectionCore

    /// The unique name the bus gave this connection (like `:1.42`).
    public let uniqueName: String

    private init(core: ConnectionCore, uniqueName: String) {
        self.core = core
        self.uniqueName = uniqueName
    }

    deinit {
        core.close()
    }

    /// Opens a private connection to the bus at `address` (`dbus_connection_open_private` and
    /// `dbus_bus_register`), with exit-on-disconnect off, its own serial queue and its event
    /// thread (which ends when the connection is closed).
    public static func connect(address: String) throws(DBusError) -> DBusConnection {
        if address.isEmpty || containsNUL(address) {
            throw .connectionFailed(address: address, reason: "the address is empty or contains NUL")
        }
        _ = dbus_threads_init_default()
        let error = CErrorBox()
        guard let connection = address.withCString({ dbus_connection_open_private($0, error.pointer) }) else {
            throw .connectionFailed(address: address, reason: error.isSet ? error.message : "unknown error")
        }
        dbus_connection_set_exit_on_disconnect(connection, 0)
        guard dbus_bus_register(connection, error.pointer) != 0,
            let namePointer = dbus_bus_get_unique_name(connection)
        else {
            let reason = error.isSet ? "\(error.name): \(error.message)" : "registration failed"
            dbus_connection_close(connection)
            dbus_connection_unref(connection)
            throw .connectionFailed(address: address, reason: reason)
        }
        let uniqueName = String(cString: namePointer)
        let core = ConnectionCore(connection: connection, address: address)
        do {
            try core.start()
        } catch {
            core.close()
            throw error
        }
        return DBusConnection(core: core, uniqueName: uniqueName)
    }

    /// Like ``connect(address:)`` with the address in `DBUS_SESSION_BUS_ADDRESS`; throws
    /// ``DBusError/noSessionBus`` when it is unset or empty.
    public static func connectToSessionBus() throws(DBusError) -> DBusConnection {
        guard let value = getenv("DBUS_SESSION_BUS_ADDRESS") else { throw DBusError(code: .noSessionBus) }
        let address = String(cString: value)
        guard !address.isEmpty else { throw DBusError(code: .noSessionBus) }
        return try connect(address: address)
    }

    /// Sets the largest incoming message libdbus accepts (`dbus_connection_set_max_message_size`);
    /// a peer sending a larger one is disconnected by libdbus.
    public func setMaximumMessageSize(_ bytes: Int) {
        try? core.performOnQueue {
            if let connection = core.liveConnection {
                dbus_connection_set_max_message_size(connection.pointer, max(bytes, 0))
            }
        }
    }

    /// Encodes `message` and hands it to libdbus on the calling thread, which writes it at
    /// once when the socket takes it (else it is queued); thread-safe, never waits for the
    /// peer. Messages sent from one thread go out in order. Throws ``DBusError/invalidMessage(_:)`` for a message libdbus
    /// would refuse (checked before anything is appended) and ``DBusError/disconnected`` once
    /// the connection is closed or lost.
    public func send(_ message: DBusMessage) throws(DBusError) {
        let raw = try MessageEncoder.encode(message)
        try core.enqueueSend(raw)
    }

    /// Sends the reply `call.makeReturn(body)` would make, without making it: a copy of the
    /// body's message given the call's serial and sender (see ``ReplyBody``), as ``send(_:)-(DBusMessage)``
    /// sends such a reply, minus the message value in between. Nothing is sent when the
    /// caller wants no reply.
    public func reply(to call: DBusMessage, with body: ReplyBody) throws(DBusError) {
        guard !call.noReplyExpected else { return }
        guard let answered = call.answered else { return try send(call.makeReturn(body)) }
        try core.enqueueSend(try body.reply(to: answered))
    }

    /// Sends a method call and waits for its reply without blocking a thread. An error reply
    /// throws ``DBusError/remote(name:message:)``; no reply within `timeout` throws
    /// `.remote(name: "org.freedesktop.DBus.Error.NoReply", …)`.
    ///
    /// The call is sent from the calling thread (no other thread is woken to send it; the
    /// order of one thread's sends and calls is kept).
    public func call(_ message: DBusMessage, timeout: Duration = .seconds(25)) async throws(DBusError) -> DBusMessage {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<DBusMessage, DBusError>, Never>) in
            startCall(message, timeout: timeout, now: true) { continuation.resume(returning: $0) }
        }
        return try result.get()
    }

    /// Registers `handler` for every method call to exactly `path`
    /// (`dbus_connection_try_register_object_path`). It runs on the connection queue and must
    /// not block; it replies with `send(message.makeReturn(…))` or `makeError`, at once or
    /// later, from any thread. Calls whose body cannot be decoded are answered
    /// `org.freedesktop.DBus.Error.InvalidArgs` here and never reach it; so are calls holding
    /// more than a million values (answered `org.freedesktop.DBus.Error.LimitsExceeded`,
    /// decoding stops at the budget so such a call costs bounded memory). libdbus keeps
    /// answering `org.freedesktop.DBus.Peer`, and Introspect on parent paths.
    /// A path registered already throws `.remote(name: "org.freedesktop.DBus.Error.ObjectPathInUse", …)`.
    public func registerObject(path: String, handler: @escaping @Sendable (DBusMessage) -> Void) throws(DBusError) {
        try core.registerObject(path: path, quickAnswer: nil, handler: handler)
    }

    /// Registers `handler` for every method call to exactly `path`, as
    /// ``registerObject(path:handler:)``, each call that waits for a reply first offered to
    /// `quickAnswer`, on the connection queue, before it is decoded (see ``IncomingCall``).
    /// A body it returns is sent as the reply at once, and the call goes no further; when it
    /// returns nil the call is decoded and handed to `handler`. `quickAnswer` must not
    /// block, and answers only calls it can answer as `handler` would.
    public func registerObject(
        path: String, quickAnswer: @escaping @Sendable (borrowing IncomingCall) -> ReplyBody?,
        handler: @escaping @Sendable (DBusMessage) -> Void
    ) throws(DBusError) {
        try core.registerObject(path: path, quickAnswer: quickAnswer, handler: handler)
    }

    /// Sets the receiver of every incoming signal (through a libdbus filter); it runs on the
    /// connection queue. Signals that cannot be decoded, or hold more than a million values,
    /// are dropped. Signals arrive when a match rule (``addMatch(_:)``) selects them or
    /// when they are sent to this connection directly.
    public func setSignalHandler(_ handler: @escaping @Sendable (DBusMessage) -> Void) {
        core.state.withLock { $0.signalHandler = handler }
    }

    /// Sets what is told of every method call to an object registered here (not of the
    /// calls libdbus answers itself, such as `org.freedesktop.DBus.Peer.Ping`), on the
    /// connection queue, before the object's quick answer or handler. It must be quick and
    /// must not block: a process uses it to know when it has calls to answer and when it
    /// has none.
    public func setCallObserver(_ observer: @escaping @Sendable () -> Void) {
        core.state.withLock { $0.callObserver = observer }
    }

    /// Sets the handler called once, on the connection queue, when the connection is lost
    /// (`org.freedesktop.DBus.Local.Disconnected`). It is not called for ``close()``.
    public func setDisconnectHandler(_ handler: @escaping @Sendable () -> Void) {
        core.state.withLock { $0.disconnectHandler = handler }
    }

    /// Blocks the calling thread until every queued outgoing message is written. Do not call it
    /// from a handler (on the connection queue) except at shutdown.
    public func flush() {
        core.flush()
    }

    /// Flushes, then closes the connection and drops it; calls still waiting fail and later
    /// calls throw ``DBusError/disconnected``. Idempotent.
    public func close() {
        core.close()
    }

    static func milliseconds(_ duration: Duration) -> Int32 {
        Int32(min(max(duration.wholeNanoseconds / 1_000_000, 0), Int(Int32.max) - 1))
    }
}
