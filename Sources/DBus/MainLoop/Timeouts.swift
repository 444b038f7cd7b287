internal import CDBus
import Dispatch

// Timeout functions: each enabled libdbus timeout (pending-call deadlines, mostly) is a
// repeating DispatchSource timer on the connection queue. Toggling replaces the timer, since
// the interval may have changed.

private let cAddTimeout: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> dbus_bool_t = {
    timeout, data in
    guard let timeout, let core = core(from: data) else { return 0 }
    core.addTimeout(timeout)
    return 1
}

private let cRemoveTimeout: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    timeout, data in
    guard let timeout, let core = core(from: data) else { return }
    core.removeTimeout(timeout)
}

private let cToggleTimeout: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    timeout, data in
    guard let timeout, let core = core(from: data) else { return }
    core.toggleTimeout(timeout)
}

extension ConnectionCore {
    /// Installs the timeout functions; false when out of memory.
    func installTimeouts(on connection: OpaquePointer) -> Bool {
        dbus_connection_set_timeout_functions(
            connection, cAddTimeout, cRemoveTimeout, cToggleTimeout, retainedPointer(), releaseCore) != 0
    }

    fileprivate func addTimeout(_ timeout: OpaquePointer) {
        let id = loop.withLock { loop -> Int in
            defer { loop.nextID += 1 }
            return loop.nextID
        }
        let entry = TimeoutEntry(
            id: id, timeout: UnsafeHandle(pointer: timeout), timer: makeTimer(timeout, id: id))
        let replaced = loop.withLock { $0.timeouts.updateValue(entry, forKey: key(of: timeout)) }
        replaced?.timer?.cancel()
    }

    fileprivate func removeTimeout(_ timeout: OpaquePointer) {
        let removed = loop.withLock { $0.timeouts.removeValue(forKey: key(of: timeout)) }
        removed?.timer?.cancel()
    }

    fileprivate func toggleTimeout(_ timeout: OpaquePointer) {
        let old = loop.withLock { loop -> (any DispatchSourceTimer)?? in
            guard let entry = loop.timeouts[key(of: timeout)] else { return .none }
            return .some(entry.timer)
        }
        guard case .some(let oldTimer) = old else { return }
        oldTimer?.cancel()
        let id = loop.withLock { $0.timeouts[key(of: timeout)]?.id } ?? -1
        let timer = makeTimer(timeout, id: id)
        loop.withLock { $0.timeouts[key(of: timeout)]?.timer = timer }
    }

    /// A running timer for an enabled timeout, or nil when it is disabled.
    private func makeTimer(_ timeout: OpaquePointer, id: Int) -> (any DispatchSourceTimer)? {
        guard dbus_timeout_get_enabled(timeout) != 0 else { return nil }
        let interval = max(Int(dbus_timeout_get_interval(timeout)), 0)
        let timeoutKey = key(of: timeout)
        let timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(deadline: .now() + .milliseconds(interval), repeating: .milliseconds(max(interval, 1)))
        timer.setEventHandler { [weak self] in
            self?.handleTimeout(key: timeoutKey, id: id)
        }
        timer.activate()
        return timer
    }

    /// A timer fired: let libdbus handle the timeout, then dispatch. On the queue.
    private func handleTimeout(key timeoutKey: UInt, id: Int) {
        let timeout = loop.withLock { loop -> UnsafeHandle? in
            guard let entry = loop.timeouts[timeoutKey], entry.id == id else { return nil }
            return entry.timeout
        }
        guard let timeout else { return }
        _ = dbus_timeout_handle(timeout.pointer)
        dispatchPending()
    }
}
