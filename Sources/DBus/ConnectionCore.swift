internal import CDBus
import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// A libdbus pointer (connection, watch, timeout, pending call) that can be captured by blocks
/// running on the connection queue.
///
/// `@unchecked Sendable`: it is only a handle. Every use of it goes through the connection's
/// serial queue (or happens inside a libdbus callback), so libdbus reads and dispatches on
/// one thread only; the exceptions are sends (``ConnectionCore/enqueueSend(_:)``,
/// ``ConnectionCore/sendCall(_:timeout:completion:)``), which libdbus's connection lock
/// makes safe from any thread and which hold their own reference to the connection.
struct UnsafeHandle: @unchecked Sendable {
    /// The libdbus object.
    let pointer: OpaquePointer
}

/// Mutable state of a connection, behind the core's mutex. The lock is never held while
/// calling into libdbus, but for `dbus_connection_ref` (an atomic increment).
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
    /// Told of every method call to a registered object, before its handler.
    var callObserver: (@Sendable () -> Void)?
    /// Calls waiting for replies, by the serial of the call.
    var pendingCalls: [UInt32: PendingReply] = [:]
    /// The deadline the reply timer is armed for, nil when disarmed.
    var replyDeadline: DispatchTime?
    /// Sends and calls queued on the queue and not yet handed to libdbus.
    var queuedSends = 0
    /// Calls being sent from their callers' threads (``ConnectionCore/sendCall(_:timeout:completion:)``).
    var sendsInFlight = 0
    /// Replies read while calls were being sent from other threads, by reply serial.
    var earlyReplies: [UInt32: RawMessage] = [:]
    /// The objects registered, whose calls the filter hands them (see ObjectRegistration.swift).
    var objects: [ObjectHandlerBox] = []
}

/// The part of a connection that libdbus callbacks point at.
///
/// Every libdbus call on the connection happens on ``queue`` except sending:
/// ``enqueueSend(_:)`` and ``sendCall(_:timeout:completion:)`` hand messages to libdbus from
/// the caller's thread (they say why that is safe). Reading and dispatch, and so libdbus's
/// filter and object-path callbacks, run on ``queue`` only; watch and dispatch-status
/// callbacks may also run on a sending thread. libdbus holds references to the core (as
/// callback user data) until the libdbus connection is finalized.
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
    /// Fails calls whose reply did not come in time (see PendingCall.swift).
    let replyTimer: ReplyTimer
    /// The pipe that wakes the event thread (see EventThread.swift); nil if none could be
    /// made, which ``start()`` reports. Closed when the core is freed.
    let wakePipe: WakePipe?

    init(connection: OpaquePointer, address: String) {
        self.address = address
        queue = DispatchQueue(label: "prefsd.dbus.connection")
        state = Mutex(CoreState(connection: UnsafeHandle(pointer: connection)))
        replyTimer = ReplyTimer(timer: DispatchSource.makeTimerSource(queue: queue))
        wakePipe = WakePipe()
        queue.setSpecific(key: queueKey, value: true)
        // Active from the start (libdispatch traps when an inactive source is released).
        replyTimer.timer.setEventHandler { [weak self] in self?.expireCalls() }
        replyTimer.timer.schedule(deadline: .distantFuture)
        replyTimer.timer.activate()
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

    /// Installs the main-loop functions and the filter, and starts the event thread.
    func start() throws(DBusError) {
        guard wakePipe != nil else {
            throw .connectionFailed(address: address, reason: "could not make the pipe that wakes the connection's event thread")
        }
        try performOnQueue { () throws(DBusError) in
            guard let connection = state.withLock({ $0.connection })?.pointer else { throw DBusError(code: .disconnected) }
            guard installMainLoop(on: connection), installFilter(on: connection) else {
                throw DBusError(code: .outOfMemory)
            }
        }
        try startEventThread()
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
        enum Route {
            case closed, queue
            case direct(UnsafeHandle)
        }
        let route = state.withLock { state -> Route in
            guard !state.closed, !state.lost, let connection = state.connection else { return .closed }
            // Calls still queued (the completion form of call()) go out first: this waits behind them.
            if state.queuedSends > 0 {
                state.queuedSends += 1
                return .queue
            }
            dbus_connection_ref(connection.pointer)
            return .direct(connection)
        }
        switch route {
        case .closed:
            throw DBusError(code: .disconnected)
        case .queue:
            queue.async { [self] in
                state.withLock { $0.queuedSends -= 1 }
                guard let connection = liveConnection else { return }
                _ = dbus_connection_send(connection.pointer, message.pointer, nil)
            }
        case .direct(let connection):
            _ = dbus_connection_send(connection.pointer, message.pointer, nil)
            dbus_connection_unref(connection.pointer)
        }
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
        // Lets libdbus take in what the close left (its Disconnected message).
        _ = dbus_connection_get_dispatch_status(connection)
        // No reply comes any more: the calls still waiting fail now.
        failPendingCalls()
        replyTimer.timer.cancel()
        state.withLock { state in
            state.signalHandler = nil
            state.disconnectHandler = nil
            state.callObserver = nil
            // Their handlers may hold the connection's owner, which holds the connection.
            state.objects = []
        }
        dbus_connection_unref(connection)
        stopEventThread()
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
