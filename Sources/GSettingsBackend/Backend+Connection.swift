import CGSettingsBackend

/// The backend's connection to the session bus: made on a thread of its own, and the
/// calls queued on it.
extension Backend {
    // MARK: The connection

    /// Whether the connection is open (lock held); the first call starts connecting, on
    /// a thread of its own, so that no caller waits for the bus beyond its own bound (a
    /// bus that accepts the connection and never answers costs one ``loadTimeout``).
    func connect() -> Bool {
        switch connection {
        case .open: return true
        case .failed, .connecting: return false
        case .notYet:
            connection = .connecting
            let thread = g_thread_new("prefsd-connect", Backend.connectThread, Unmanaged.passRetained(self).toOpaque())
            g_thread_unref(thread)
            return false
        }
    }

    /// Starts connecting once the main loop of the calling thread's thread-default context
    /// next runs (lock held; once).
    func connectWhenIdle() {
        guard !connectsWhenIdle else { return }
        connectsWhenIdle = true
        let context = g_main_context_ref_thread_default()
        let source = g_idle_source_new()
        // Before the program's own idle work: the loads of the domains it read go out first.
        g_source_set_priority(source, G_PRIORITY_DEFAULT)
        g_source_set_callback(source, Backend.idleConnect, Unmanaged.passRetained(self).toOpaque(), Backend.releaseFunction)
        g_source_attach(source, context)
        g_source_unref(source)
        g_main_context_unref(context)
    }

    static let idleConnect: GSourceFunc = { context in
        guard let context else { return 0 }
        let backend = Unmanaged<Backend>.fromOpaque(context).takeUnretainedValue()
        backend.locked { _ = backend.connect() }
        return 0  // G_SOURCE_REMOVE
    }

    static let connectThread: GThreadFunc = { context in
        guard let context else { return nil }
        let backend = Unmanaged<Backend>.fromOpaque(context).takeRetainedValue()
        var error: UnsafeMutablePointer<GError>?
        let bus = g_bus_get_sync(G_BUS_TYPE_SESSION, nil, &error)
        var reason = ""
        if let error {
            reason = String(cString: error.pointee.message)
            g_error_free(error)
        }
        backend.connected(bus, reason: reason)
        return nil
    }

    /// The connection is made (or could not be): follows the domains asked for meanwhile.
    func connected(_ bus: OpaquePointer?, reason: String) {
        locked {
            guard case .connecting = connection else {
                // Finalized meanwhile: the connection is not wanted.
                if let bus { g_object_unref(UnsafeMutableRawPointer(bus)) }
                return
            }
            if let bus {
                connection = .open(bus)
                // The filter holds the backend until GDBus drops the filter.
                let retained = Unmanaged.passRetained(self).toOpaque()
                filter = g_dbus_connection_add_filter(bus, Backend.filterFunction, retained, Backend.releaseFunction)
                send(Messages.busCall("AddMatch", names.ownerRule))
                for domain in wanted { engine.follow(domain) }
                wanted = []
                run()
            } else {
                connection = .failed
                news.reports.append("prefsd: GSettings values are the schema defaults: the session bus could not be reached: " + reason)
            }
            g_cond_broadcast(&lock.pointee.cond)
        }
    }

    /// Queues `message` (lock held) and returns its serial, or 0 when it could not be sent.
    @discardableResult
    func send(_ message: OpaquePointer) -> UInt32 {
        defer { g_object_unref(UnsafeMutableRawPointer(message)) }
        guard case .open(let bus) = connection else { return 0 }
        var serial: guint32 = 0
        var error: UnsafeMutablePointer<GError>?
        if g_dbus_connection_send_message(bus, message, G_DBUS_SEND_MESSAGE_FLAGS_NONE, &serial, &error) == 0 {
            if let error { g_error_free(error) }
            return 0
        }
        return serial
    }
}
