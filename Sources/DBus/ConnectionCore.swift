import Dispatch
import Synchronization
internal import CDBus

/// A libdbus pointer (connection, watch, timeout, pending call) that can be captured by blocks
/// running on the connection queue.
///
/// `@unchecked Sendable`: it is only a handle. Every use of it goes through the connection's
/// serial queue (or happens inside a libdbus callback, which runs on that queue), so libdbus
/// reads and dispatches on one thread only; the one exception is sending
/// (``ConnectionCore/enqueueSend(_:)``), which libdbus's connection lock makes safe from any
/// thread.
struct UnsafeHandle: @unchecked Sendable {
    /// The libdbus object.
    let pointer: OpaquePointer
}

/// Mutable state of a connection, behind the core's mutex. The lock is never held while
/// calling into libdbus.
struct CoreState {
    /// The libdbus connection we own one reference to; nil once closed.
    var connection: UnsafeHandle?
    /// `close()` was called.
    var closed = false
    /// `org.freedesktop.DBus.Local.Disconnected` was seen.
    var lost = false
    /// A dispatch block is queued already.
    var dispatchScheduled = false
    /// Receives incoming signals.
    var signalHandler: (@Sendable (DBusMessage) -> Void)?
    /// Receives the loss of the connection, once.
    var disconnectHandler: (@Sendable () -> Void)?
    /// Calls waiting for replies, by id.
    var pendingCalls: [Int: PendingCallContext] = [:]
    /// The next pending call id.
    var nextPendingID = 0
}

/// The part of a connection that libdbus callbacks point at.
///
/// All libdbus calls on the connection happen on ``queue``; libdbus's callbacks (watches,
/// timeouts, dispatch status, filter, object paths, pending-call notifications) therefore also
/// run there. libdbus holds references to the core (as callback user data) until the libdbus
/// connection is finalized.
final class ConnectionCore: Sendable {
    /// The serial queue every libdbus call on this connection runs on.
    let queue: DispatchQueue
    /// Marks ``queue`` so ``isOnQueue`` can tell when we are on it.
    private let queueKey = DispatchSpecificKey<Bool>()
    /// Connection state.
    let state: Mutex<CoreState>
    /// Watches and timeouts of the main loop.
    let loop = Mutex(LoopState())
    /// The address connected to, for messages.
    let address: String

    init(connection: OpaquePointer, address: String) {
        self.address = address
        queue = DispatchQueue(label: "prefsd.dbus.connection")
        state = Mutex(CoreState(connection: UnsafeHandle(pointer: connection)))
        queue.setSpecific(key: queueKey, value: true)
    }

    /// Whether the current code runs on ``queue``.
    var isOnQueue: Bool {
        DispatchQueue.getSpecific(key: queueKey) == true
    }

    /// Runs `body` on the queue and waits for it (directly when already there).
    func performOnQueue<T>(_ body: () throws(DBusError) -> T) throws(DBusError) -> T {
        if isOnQueue { return try body() }
        let result: Result<T, DBusError> = queue.sync {
            Result { () throws(DBusError) -> T in try body() }
        }
        return try result.get()
    }

    /// The live connection, or nil once closed or lost.
    var liveConnection: UnsafeHandle? {
        state.withLock { $0.lost ? nil : $0.connection }
    }

    /// Installs the main-loop functions and the filter. Runs on the queue.
    func start() throws(DBusError) {
        try performOnQueue { () throws(DBusError) in
            guard let connection = state.withLock({ $0.connection })?.pointer else { throw .disconnected }
            guard installMainLoop(on: connection), installFilter(on: connection) else {
                throw .outOfMemory
            }
        }
        scheduleDispatch()
    }

    /// Hands out a retained reference for libdbus user data; released by ``releaseCore``.
    func retainedPointer() -> UnsafeMutableRawPointer {
        Unmanaged.passRetained(self).toOpaque()
    }

    /// Hands `message` to libdbus on the calling thread, which writes what the socket takes
    /// at once and queues the rest for the connection's write watch. Order of calls from one
    /// thread is kept.
    ///
    /// Sending on the caller's thread, not the queue's, spares a thread wake-up per message
    /// (a reply sent by the store's writer goes out as soon as it is durable). libdbus allows
    /// it: its connection lock serialises the send with the queue's reading and
    /// dispatching, a send never waits for incoming data (nothing here blocks in libdbus
    /// holding the connection's I/O path: there is no `send_with_reply_and_block`), and the
    /// callbacks it may make meanwhile (a watch toggled, the dispatch status) only touch
    /// locked bookkeeping and queue work. The connection is referenced for the duration,
    /// so a concurrent ``close()`` cannot free it underneath.
    func enqueueSend(_ message: RawMessage) throws(DBusError) {
        let connection = state.withLock { state -> UnsafeHandle? in
            guard !state.closed, !state.lost, let connection = state.connection else { return nil }
            dbus_connection_ref(connection.pointer)
            return connection
        }
        guard let connection else { throw .disconnected }
        _ = dbus_connection_send(connection.pointer, message.pointer, nil)
        dbus_connection_unref(connection.pointer)
    }

    /// Blocks until every queued outgoing message is written.
    func flush() {
        if isOnQueue {
            if let connection = liveConnection { dbus_connection_flush(connection.pointer) }
            return
        }
        queue.sync {
            if let connection = liveConnection { dbus_connection_flush(connection.pointer) }
        }
    }

    /// Closes the connection once: flush, close, complete waiting calls, drop our reference.
    func close() {
        let first = state.withLock { state -> Bool in
            defer { state.closed = true }
            return !state.closed
        }
        guard first else { return }
        if isOnQueue {
            // Possibly inside dbus_connection_dispatch: finish after it returns.
            queue.async { [self] in finishClose() }
        } else {
            queue.sync { finishClose() }
        }
    }

    private func finishClose() {
        let taken = state.withLock { state -> UnsafeHandle? in
            defer { state.connection = nil }
            return state.connection
        }
        guard let connection = taken?.pointer else { return }
        dbus_connection_flush(connection)
        dbus_connection_close(connection)
        // Lets libdbus complete the calls still waiting (with NoReply errors).
        _ = dbus_connection_get_dispatch_status(connection)
        failPendingCalls()
        state.withLock { state in
            state.signalHandler = nil
            state.disconnectHandler = nil
        }
        dbus_connection_unref(connection)
    }
}

/// The `DBusFreeFunction` for user data made by ``ConnectionCore/retainedPointer()``.
let releaseCore: @convention(c) (UnsafeMutableRawPointer?) -> Void = { data in
    guard let data else { return }
    Unmanaged<ConnectionCore>.fromOpaque(data).release()
}

/// The core behind libdbus user data, or nil.
func core(from data: UnsafeMutableRawPointer?) -> ConnectionCore? {
    guard let data else { return nil }
    return Unmanaged<ConnectionCore>.fromOpaque(data).takeUnretainedValue()
}
