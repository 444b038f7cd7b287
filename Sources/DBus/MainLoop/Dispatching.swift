internal import CDBus
import Dispatch

// Dispatching: libdbus reports through the dispatch-status function that messages wait; we
// never dispatch inside that callback but queue a block that does.

private let dispatchStatusChanged: @convention(c) (OpaquePointer?, DBusDispatchStatus, UnsafeMutableRawPointer?) -> Void = {
    _, status, data in
    guard status == DBUS_DISPATCH_DATA_REMAINS, let core = core(from: data) else { return }
    core.scheduleDispatch()
}

extension ConnectionCore {
    /// Installs the dispatch-status function.
    func installDispatchStatus(on connection: OpaquePointer) {
        dbus_connection_set_dispatch_status_function(
            connection, dispatchStatusChanged, retainedPointer(), releaseCore)
    }

    /// Queues one dispatch block unless one is queued already.
    func scheduleDispatch() {
        let schedule = state.withLock { state -> Bool in
            defer { state.dispatchScheduled = true }
            return !state.dispatchScheduled
        }
        if schedule {
            queue.async { [weak self] in self?.dispatchPending() }
        }
    }

    /// Dispatches waiting messages; after a batch it yields the queue and comes back. On the queue.
    func dispatchPending() {
        let connection = state.withLock { state -> UnsafeHandle? in
            state.dispatchScheduled = false
            return state.connection
        }
        guard let connection else { return }
        for _ in 0..<64 {
            if dbus_connection_dispatch(connection.pointer) != DBUS_DISPATCH_DATA_REMAINS { return }
        }
        scheduleDispatch()
    }
}
