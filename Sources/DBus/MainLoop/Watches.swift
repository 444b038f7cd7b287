internal import CDBus
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

// Watch functions: libdbus asks us to watch its socket for reading and writing. Each direction
// gets a DispatchSource on the connection queue, over a dup() of the descriptor that is closed
// only in the source's cancel handler (so libdbus closing its own descriptor can never leave a
// source watching a reused number). Disabled watches suspend their sources.
// libdbus calls these with its connection lock held: they only touch our own bookkeeping.

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
        let flags = dbus_watch_get_flags(watch)
        let enabled = dbus_watch_get_enabled(watch) != 0
        let id = loop.withLock { loop -> Int in
            defer { loop.nextID += 1 }
            return loop.nextID
        }
        let watchKey = key(of: watch)
        var sources: [WatchSource] = []
        for direction in [DBUS_WATCH_READABLE.rawValue, DBUS_WATCH_WRITABLE.rawValue]
        where flags & direction != 0 {
            let ownFD = dup(fd)
            guard ownFD >= 0 else {
                for made in sources { made.source.cancel() }
                return false
            }
            let source: any DispatchSourceProtocol =
                direction == DBUS_WATCH_READABLE.rawValue
                ? DispatchSource.makeReadSource(fileDescriptor: ownFD, queue: queue)
                : DispatchSource.makeWriteSource(fileDescriptor: ownFD, queue: queue)
            source.setEventHandler { [weak self] in
                self?.handleWatch(key: watchKey, id: id, flags: direction)
            }
            source.setCancelHandler { _ = Glibc.close(ownFD) }
            source.activate()
            if !enabled { source.suspend() }
            sources.append(WatchSource(source: source, suspended: !enabled))
        }
        let entry = WatchEntry(id: id, watch: UnsafeHandle(pointer: watch), sources: sources)
        let replaced = loop.withLock { $0.watches.updateValue(entry, forKey: watchKey) }
        if let replaced { Self.cancel(replaced.sources) }
        return true
    }

    fileprivate func removeWatch(_ watch: OpaquePointer) {
        let removed = loop.withLock { $0.watches.removeValue(forKey: key(of: watch)) }
        if let removed { Self.cancel(removed.sources) }
    }

    fileprivate func toggleWatch(_ watch: OpaquePointer) {
        let enabled = dbus_watch_get_enabled(watch) != 0
        loop.withLock { loop in
            guard var entry = loop.watches[key(of: watch)] else { return }
            for index in entry.sources.indices where entry.sources[index].suspended == enabled {
                if enabled { entry.sources[index].source.resume() } else { entry.sources[index].source.suspend() }
                entry.sources[index].suspended = !enabled
            }
            loop.watches[key(of: watch)] = entry
        }
    }

    /// A source fired: let libdbus read or write, then dispatch what arrived. On the queue.
    private func handleWatch(key watchKey: UInt, id: Int, flags: UInt32) {
        let watch = loop.withLock { loop -> UnsafeHandle? in
            guard let entry = loop.watches[watchKey], entry.id == id else { return nil }
            return entry.watch
        }
        guard let watch else { return }
        _ = dbus_watch_handle(watch.pointer, flags)
        dispatchPending()
    }

    /// Cancels sources; suspended ones are resumed so their cancel handlers run.
    private static func cancel(_ sources: [WatchSource]) {
        for item in sources {
            item.source.cancel()
            if item.suspended { item.source.resume() }
        }
    }
}
