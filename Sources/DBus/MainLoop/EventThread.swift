internal import CDBus
import Dispatch

#if canImport(Glibc)
    import Glibc
#endif

// The event thread: one thread per connection blocks in poll(2) on the descriptors of
// libdbus's enabled watches and an eventfd that wakes it when they change. When a descriptor
// is ready it runs the watch on the connection queue with `queue.sync`, which libdispatch
// runs on the event thread itself when the queue is idle: a message that arrives wakes one
// thread, which reads, dispatches and answers it. (DispatchSources woke two per message:
// libdispatch's event thread, then a worker for the queue, and a third time to re-arm.)

extension ConnectionCore {
    /// Starts the event thread; it holds a reference to the core until ``stopEventThread()``.
    func startEventThread() throws(DBusError) {
        let data = Unmanaged.passRetained(self).toOpaque()
        var thread = pthread_t()
        let result = pthread_create(
            &thread, nil,
            { data in
                guard let data else { return nil }
                Unmanaged<ConnectionCore>.fromOpaque(data).takeRetainedValue().runEventThread()
                return nil
            }, data)
        guard result == 0 else {
            Unmanaged<ConnectionCore>.fromOpaque(data).release()
            throw .connectionFailed(
                address: address, reason: "could not start the connection's event thread (\(String(cString: strerror(result))))")
        }
        pthread_detach(thread)
    }

    /// Tells the event thread to close what it holds and end.
    func stopEventThread() {
        loop.withLock { $0.stopped = true }
        wakeEventThread()
    }

    /// Makes the event thread's poll return, so it looks at the watches again.
    func wakeEventThread() {
        wakePipe?.wake()
    }

    /// The event thread's body.
    private func runEventThread() {
        guard let wakePipe else { return }
        // Watches whose descriptor poll reported invalid: not polled again until replaced.
        var invalid: Set<Int> = []
        // What is polled, rebuilt only after the wake pipe fired: every change to the watches
        // (and the stop) writes to it, so between two wakes the set cannot have changed.
        var watching: [(key: UInt, entry: WatchEntry)] = []
        var polled: [pollfd] = []
        var stale = true
        while true {
            if stale {
                let (stopped, retired, current) = loop.withLock { loop in
                    defer { loop.retired = [] }
                    let current = loop.watches.filter { $0.value.enabled && !invalid.contains($0.value.id) }
                        .map { (key: $0.key, entry: $0.value) }
                    return (loop.stopped, loop.retired, current)
                }
                for descriptor in retired { _ = Glibc.close(descriptor) }
                if stopped { break }
                watching = current
                polled = [pollfd(fd: wakePipe.readEnd, events: Int16(POLLIN), revents: 0)]
                for (_, entry) in watching {
                    polled.append(pollfd(fd: entry.descriptor, events: Self.pollEvents(entry.flags), revents: 0))
                }
                stale = false
            }
            for index in polled.indices { polled[index].revents = 0 }
            guard poll(&polled, nfds_t(polled.count), -1) > 0 else { continue }  // EINTR
            if polled[0].revents != 0 {
                wakePipe.drain()
                stale = true
            }
            for (index, (watchKey, entry)) in watching.enumerated() where polled[index + 1].revents != 0 {
                let revents = polled[index + 1].revents
                if revents & Int16(POLLNVAL) != 0 {
                    invalid.insert(entry.id)
                    stale = true
                }
                let flags = Self.watchFlags(revents)
                queue.sync { handleWatch(key: watchKey, id: entry.id, flags: flags) }
            }
        }
        let left = loop.withLock { loop in
            defer { loop.watches = [:]; loop.retired = [] }
            return loop.watches.values.map(\.descriptor) + loop.retired
        }
        for descriptor in left { _ = Glibc.close(descriptor) }
        // The wake pipe stays open until the core is freed: libdbus may still call the watch
        // functions, which write to it, until it lets go of the core.
    }

    /// poll(2) events for libdbus watch flags.
    private static func pollEvents(_ flags: UInt32) -> Int16 {
        var events: Int16 = 0
        if flags & DBUS_WATCH_READABLE.rawValue != 0 { events |= Int16(POLLIN) }
        if flags & DBUS_WATCH_WRITABLE.rawValue != 0 { events |= Int16(POLLOUT) }
        return events
    }

    /// libdbus watch flags for what poll(2) reported.
    private static func watchFlags(_ revents: Int16) -> UInt32 {
        var flags: UInt32 = 0
        if revents & Int16(POLLIN) != 0 { flags |= DBUS_WATCH_READABLE.rawValue }
        if revents & Int16(POLLOUT) != 0 { flags |= DBUS_WATCH_WRITABLE.rawValue }
        if revents & Int16(POLLHUP) != 0 { flags |= DBUS_WATCH_HANGUP.rawValue }
        if revents & Int16(POLLERR | POLLNVAL) != 0 { flags |= DBUS_WATCH_ERROR.rawValue }
        return flags
    }
}

/// A non-blocking pipe whose reading end the event thread polls; writing a byte wakes it.
/// Both ends are closed when it is freed (with the connection's core).
final class WakePipe: Sendable {
    /// The end the event thread polls and drains.
    let readEnd: Int32
    /// The end ``wake()`` writes to.
    let writeEnd: Int32

    /// Nil when the pipe cannot be made (out of descriptors).
    init?() {
        var ends: [Int32] = [-1, -1]
        guard pipe(&ends) == 0 else { return nil }
        for end in ends {
            _ = fcntl(end, F_SETFD, FD_CLOEXEC)
            _ = fcntl(end, F_SETFL, fcntl(end, F_GETFL) | O_NONBLOCK)
        }
        (readEnd, writeEnd) = (ends[0], ends[1])
    }

    deinit {
        _ = Glibc.close(readEnd)
        _ = Glibc.close(writeEnd)
    }

    /// Writes a byte (a full pipe already wakes the thread, so a failed write is fine).
    func wake() {
        var byte: UInt8 = 1
        _ = write(writeEnd, &byte, 1)
    }

    /// Reads every byte written so far.
    func drain() {
        var buffer = [UInt8](repeating: 0, count: 64)
        while read(readEnd, &buffer, buffer.count) > 0 {}
    }
}
