internal import CDBus

#if canImport(Glibc)
    import Glibc
#endif

// Watch functions: libdbus asks us to watch its socket for reading and writing. Each watch is
// recorded with a dup() of its descriptor, which the event thread polls while libdbus has the
// watch enabled (see EventThread.swift); the dup is closed by the event thread only once it no
// longer polls it, so libdbus closing its own descriptor can never leave a poll on a reused
// number. libdbus calls these with its connection lock held: they only touch our own
// bookkeeping and wake the event thread.

private let cAddWatch: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> dbus_bool_t = {
    watch, data in
    guard let watch, let core = core(from: data) else { return 0 }
    return core.addWatch(watch) ? 1 : 0
}

private let cRemoveWatch: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    watch, data in
    guard let watch, let core = core(from: data) else { return }
    core.removeWatch(watch)
}

private let cToggleWatch: @convention(c) (OpaquePointer?, UnsafeMutableRawPointer?) -> Void = {
    watch, data in
    guard let watch, let core = core(from: data) else { return }
    core.toggleWatch(watch)
}

extension ConnectionCore {
    /// Installs watch, timeout and dispatch-status functions; false when out of memory.
    func installMainLoop(on connection: OpaquePointer) -> Bool {
        let watchData = retainedPointer()
        guard
            dbus_connection_set_watch_functions(
                connection, cAddWatch, cRemoveWatch, cToggleWatch, watchData, releaseCore) != 0
        else {
            return false
        }
        guard installTimeouts(on: connection) else { return false }
        installDispatchStatus(on: connection)
        return true
    }

    fileprivate func addWatch(_ watch: OpaquePointer) -> Bool {
        let fd = dbus_watch_get_unix_fd(watch)
        guard fd >= 0 else { return false }
        let ownFD = fcntl(fd, F_DUPFD_CLOEXEC, 0)
        guard ownFD >= 0 else { return false }
        loop.withLock { loop in
            defer { loop.nextID += 1 }
            let entry = WatchEntry(
                id: loop.nextID, watch: UnsafeHandle(pointer: watch), descriptor: ownFD,
                flags: dbus_watch_get_flags(watch), enabled: dbus_watch_get_enabled(watch) != 0)
            let replaced = loop.watches.updateValue(entry, forKey: key(of: watch))
            if let replaced { loop.retired.append(replaced.descriptor) }
        }
        wakeEventThread()
        return true
    }

    fileprivate func removeWatch(_ watch: OpaquePointer) {
        let removed = loop.withLock { loop -> Bool in
            guard let entry = loop.watches.removeValue(forKey: key(of: watch)) else { return false }
            loop.retired.append(entry.descriptor)
            return true
        }
        if removed { wakeEventThread() }
    }

    fileprivate func toggleWatch(_ watch: OpaquePointer) {
        let enabled = dbus_watch_get_enabled(watch) != 0
        let changed = loop.withLock { loop -> Bool in
            guard loop.watches[key(of: watch)]?.enabled == !enabled else { return false }
            loop.watches[key(of: watch)]?.enabled = enabled
            return true
        }
        if changed { wakeEventThread() }
    }

    /// The event thread saw `flags` on a watch: let libdbus read or write, then dispatch what
    /// arrived. On the queue.
    func handleWatch(key watchKey: UInt, id: Int, flags: UInt32) {
        let watch = loop.withLock { loop -> UnsafeHandle? in
            guard let entry = loop.watches[watchKey], entry.id == id else { return nil }
            return entry.watch
        }
        guard let watch else { return }
        // Dispatched right below: the dispatch status libdbus reports while reading need not
        // queue a block (which would wake a worker thread for nothing).
        state.withLock { $0.dispatchScheduled = true }
        _ = dbus_watch_handle(watch.pointer, flags)
        dispatchPending()
    }
}
