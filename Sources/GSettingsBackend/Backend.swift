import CGSettingsBackend

/// The backend's work: a ``ClientEngine`` of wire values (the cache of every prefsd domain
/// GSettings asked for, kept true by prefsd's signals, the backend's writes laid over it
/// and coalesced), driven over GDBus on the process's own session-bus connection.
///
/// **Threads.** GSettings calls in on any thread; prefsd's answers and signals come on
/// GDBus's worker thread, through a message filter, in the order they arrived: so the
/// engine sees them in the order prefsd sent them. One GMutex guards the engine and the
/// tables; calls are queued with `g_dbus_connection_send_message` under it (a queue
/// operation: GDBus writes on its worker thread, and runs filters without its own lock,
/// so the filter waiting for the mutex cannot deadlock), which records each call's serial
/// before its answer can be seen. GSettings is told of changes after the mutex is
/// released: its signal functions may call back into the backend.
///
/// **Waits.** Only the first read (or write) of a domain waits, for its load, at most
/// ``loadTimeout``; `sync` waits for the writes made so far, at most ``syncTimeout``. A
/// read waits for nothing when prefsd keeps a valid ``Snapshot`` of the domain: the read
/// answers from it, the load goes out as usual, and reads answer from the snapshot (its
/// validity checked each time) until the load has come; a snapshot found stale falls back to
/// waiting for the load.
///
/// `@unchecked Sendable`: GSettings' threads and GDBus's worker share one instance, and
/// every stored property that changes is read and written only with `lock` held (the
/// others are set in `init` and never change).
final class Backend: @unchecked Sendable {
    /// How long loading a domain may take, activation of prefsd included.
    static let loadTimeout: gint64 = 5_000_000
    /// How long `sync` waits for the writes made so far.
    static let syncTimeout: gint64 = 25_000_000

    private enum Connection {
        case notYet
        case connecting
        case open(OpaquePointer)
        case failed
    }

    /// What a call in flight was, by its message serial.
    private enum Call {
        case forcedKeys(ClientDomain, token: UInt64)
        case readDomain(ClientDomain, token: UInt64)
        case write(ClientDomain, token: UInt64)
    }

    /// The two answers of a load (`ForcedKeys`, `ReadDomain`), as they come.
    private struct LoadAnswers {
        var forced: (keys: [String], serial: UInt32)?
        var values: (values: [String: WireValue], serial: UInt32, sender: String?)?
        var failure: String?
        var answered = 0
    }

    /// What to tell GSettings once the mutex is released.
    private struct News {
        var keys: [(ClientDomain, [String])] = []
        var writable: [(ClientDomain, [String])] = []
        var paths: [ClientDomain] = []
        var reports: [String] = []
        var isEmpty: Bool { keys.isEmpty && writable.isEmpty && paths.isEmpty && reports.isEmpty }
    }

    private let lock: UnsafeMutablePointer<prefsd_lock>
    private let names = BusNames.current()
    /// The GSettingsBackend, weakly: news that comes while it is finalized is dropped.
    private let instance: UnsafeMutablePointer<GWeakRef>

    // Guarded by `lock`.
    private var engine = ClientEngine<WireValue>()
    private var connection = Connection.notYet
    private var filter: guint = 0
    private var calls: [UInt32: Call] = [:]
    private var loads: [UInt64: LoadAnswers] = [:]
    /// Domains whose first load outlived a reader's wait: the reader answered the schema
    /// default, so GSettings hears of the whole directory once the load ends.
    private var answeredEarly: Set<ClientDomain> = []
    /// Domains asked for while the connection is being made.
    private var wanted: Set<ClientDomain> = []
    /// GSettings full keys already mapped (`nil`: not mappable).
    private var locations: [String: GSettingsPath?] = [:]
    private var news = News()
    /// Moves after every change of what readers may see (every engine step).
    private var changeCount: UInt64 = 0
    private var rendered = RenderedValues()
    /// The snapshots first reads answered from, by domain, kept until the domain's load
    /// has come (then GSettings hears of what the load changed).
    private var snapshots: [ClientDomain: Snapshot] = [:]
    /// Domains whose snapshot was looked for (once per domain and process).
    private var snapshotsSought: Set<ClientDomain> = []
    /// This process's snapshot directory (none inside a sandbox: the door decides there).
    private let snapshotDirectory: String?

    /// A backend for `instance`, a `GSettingsBackend` being constructed.
    init(instance object: UnsafeMutableRawPointer) {
        lock = .allocate(capacity: 1)
        g_mutex_init(&lock.pointee.mutex)
        g_cond_init(&lock.pointee.cond)
        instance = .allocate(capacity: 1)
        instance.initialize(to: GWeakRef())
        g_weak_ref_init(instance, object)
        snapshotDirectory = names.subscribesAtDoor ? nil : Snapshot.directory()
    }

    deinit {
        for variant in rendered.removeAll() { g_variant_unref(variant) }
        g_weak_ref_clear(instance)
        instance.deallocate()
        g_cond_clear(&lock.pointee.cond)
        g_mutex_clear(&lock.pointee.mutex)
        lock.deallocate()
    }

    private func locked<T>(_ body: () -> T) -> T {
        g_mutex_lock(&lock.pointee.mutex)
        let result = body()
        let told = news
        news = News()
        g_mutex_unlock(&lock.pointee.mutex)
        if !told.isEmpty { deliver(told) }
        return result
    }

    // MARK: GSettings' calls

    /// The value of the GSettings full key `key` of GVariant type `type` (a new
    /// reference): the user's (pending writes first), or with `defaultValue` the
    /// administrator's forced value. With `userValue`, a forced key answers `nil`.
    func read(_ key: String, type: String, defaultValue: Bool = false, userValue: Bool = false) -> OpaquePointer? {
        guard let location = location(key) else { return nil }
        let domain = ClientDomain(location.domain)
        let value: WireValue? = locked {
            if let snapshot = snapshot(domain) {
                let forced = snapshot.forced.contains(location.key)
                if defaultValue { return forced ? snapshot.values[location.key] : nil }
                if userValue && forced { return nil }
                return snapshot.values[location.key]
            }
            waitForLoad(domain)
            let forced = engine.isForced(location.key, in: domain)
            if defaultValue { return forced ? engine.value(location.key, in: domain) : nil }
            if userValue && forced { return nil }
            return engine.value(location.key, in: domain)
        }
        return value.flatMap { VariantMapping.settingsValue(fromWire: $0.variant, type: type) }
    }

    /// The user's value of `key` as last handed to GSettings, if nothing changed since (a
    /// new reference; allocates nothing).
    func cachedRead(_ key: UnsafePointer<CChar>, type: OpaquePointer) -> OpaquePointer? {
        g_mutex_lock(&lock.pointee.mutex)
        defer { g_mutex_unlock(&lock.pointee.mutex) }
        return rendered.value(key, type: type, changeCount: changeCount)
    }

    /// The user's value of `key` (C string) of GVariant type `type` (a new reference),
    /// rendered and kept for the next read of it.
    func readAndKeep(_ key: UnsafePointer<CChar>, type: OpaquePointer) -> OpaquePointer? {
        let name = String(cString: key)
        guard let location = location(name) else { return nil }
        let domain = ClientDomain(location.domain)
        let (value, seen, fromSnapshot): (WireValue?, UInt64, Bool) = locked {
            if let snapshot = snapshot(domain) { return (snapshot.values[location.key], 0, true) }
            waitForLoad(domain)
            return (engine.value(location.key, in: domain), changeCount, false)
        }
        guard let value, let variant = VariantMapping.settingsValue(fromWire: value.variant, type: Self.typeString(type)) else { return nil }
        // A snapshot's value is not kept: the next read checks the snapshot's validity again.
        if fromSnapshot { return variant }
        g_mutex_lock(&lock.pointee.mutex)
        let dropped = rendered.keep(variant, key, type: type, changeCount: seen)
        g_mutex_unlock(&lock.pointee.mutex)
        for old in dropped { g_variant_unref(old) }
        return variant
    }

    static func typeString(_ type: OpaquePointer) -> String {
        guard let text = g_variant_type_dup_string(type) else { return "" }
        defer { g_free(text) }
        return String(cString: text)
    }

    /// Whether a write of `key` can succeed: mappable, prefsd reachable, loaded, not forced.
    func isWritable(_ key: String) -> Bool {
        guard let location = location(key) else { return false }
        let domain = ClientDomain(location.domain)
        return locked {
            waitForLoad(domain)
            guard case .open = connection, engine.phase(of: domain) == .loaded else { return false }
            return !engine.isForced(location.key, in: domain)
        }
    }

    /// Starts connecting to the bus, without waiting (GSettings made the backend: it will
    /// read soon, and meanwhile parses its schemas).
    func start() {
        locked { _ = connect() }
    }

    /// Starts loading the domain of the GSettings directory `path`, without waiting.
    func subscribe(_ path: String) {
        guard let name = GSettingsPath.domain(ofDirectory: path) else { return }
        locked {
            guard connect() else {
                if case .connecting = connection { wanted.insert(ClientDomain(name)) }
                return
            }
            engine.follow(ClientDomain(name))
            run()
        }
    }

    /// Writes (a value) or resets (`nil`) each GSettings full key, in one `Apply` per
    /// domain (coalesced with the writes made while one is in flight). Readers see the
    /// values at once; `false`, changing nothing, when a key is not mappable, is forced,
    /// or its domain is not loaded (prefsd could not be reached, or did not answer in time).
    func write(_ changes: [(key: String, value: OpaquePointer?)], tag: UnsafeMutableRawPointer?) -> Bool {
        var byDomain: [ClientDomain: [(key: String, value: WireValue?)]] = [:]
        var order: [ClientDomain] = []
        for change in changes {
            guard let location = location(change.key) else { return false }
            let domain = ClientDomain(location.domain)
            if byDomain[domain] == nil { order.append(domain) }
            byDomain[domain, default: []].append((location.key, change.value.map { WireValue(taking: VariantMapping.wire(from: $0)) }))
        }
        let accepted: Bool = locked {
            for domain in order {
                waitForLoad(domain)
                guard engine.phase(of: domain) == .loaded else { return false }
                for change in byDomain[domain] ?? [] where engine.isForced(change.key, in: domain) { return false }
            }
            for domain in order { _ = engine.write(byDomain[domain] ?? [], in: domain) }
            run()
            return true
        }
        if accepted { keysChanged(changes.map { $0.key }, tag: tag) }
        return accepted
    }

    /// Waits until every write made so far is answered by prefsd (durable, or refused).
    func sync() {
        locked {
            let deadline = g_get_monotonic_time() + Self.syncTimeout
            while engine.hasPendingWrites() {
                if g_cond_wait_until(&lock.pointee.cond, &lock.pointee.mutex, deadline) == 0 { break }
            }
        }
    }

    /// The domain's load, started if need be and waited for (lock held), at most
    /// ``loadTimeout`` with the connection's own start, unless a reader already gave up
    /// on it: then the domain's values come later, told as a change of its whole path.
    private func waitForLoad(_ domain: ClientDomain) {
        let deadline = g_get_monotonic_time() + Self.loadTimeout
        while true {
            if connect() {
                if engine.follow(domain) != .loading { return }
                run()
                if engine.phase(of: domain) != .loading { return }
            } else if case .failed = connection {
                return
            } else {
                wanted.insert(domain)
            }
            if answeredEarly.contains(domain) { return }
            if g_cond_wait_until(&lock.pointee.cond, &lock.pointee.mutex, deadline) == 0 {
                answeredEarly.insert(domain)
                return
            }
        }
    }

    /// The domain's snapshot, when reads may answer from it (lock held): its load has not
    /// come and it is valid. The first time, it is looked for, and when there is one the
    /// domain's load is started without waiting for it.
    private func snapshot(_ domain: ClientDomain) -> Snapshot? {
        if let snapshot = snapshots[domain] { return snapshot.isValid ? snapshot : nil }
        guard let snapshotDirectory, !snapshotsSought.contains(domain) else { return nil }
        snapshotsSought.insert(domain)
        switch engine.phase(of: domain) {
        case .unknown, .loading: break
        case .loaded, .unavailable: return nil
        }
        if case .failed = connection { return nil }
        guard let snapshot = Snapshot.open(domain.name, in: snapshotDirectory) else { return nil }
        snapshots[domain] = snapshot
        if connect() {
            engine.follow(domain)
            run()
        } else if case .connecting = connection {
            wanted.insert(domain)
        }
        return snapshot
    }

    /// The load of a domain read from a snapshot has come (lock held): GSettings hears of
    /// every key whose value or writability the load changed (or of the whole directory,
    /// when the load failed and the schema defaults answer now).
    private func snapshotReplaced(_ snapshot: Snapshot, _ domain: ClientDomain, loaded: Bool) {
        guard loaded else {
            news.paths.append(domain)
            return
        }
        let values = engine.entries(of: domain)
        var keys: [String] = []
        for (key, value) in values where snapshot.values[key] != value { keys.append(key) }
        for key in snapshot.values.keys where values[key] == nil { keys.append(key) }
        if !keys.isEmpty { news.keys.append((domain, keys)) }
        let forced = engine.forcedKeys(in: domain)
        let writable = Array(forced.symmetricDifference(snapshot.forced))
        if !writable.isEmpty { news.writable.append((domain, writable)) }
    }

    /// The location of a GSettings full key, mapped once (lock not held).
    private func location(_ key: String) -> GSettingsPath? {
        let known: GSettingsPath?? = locked { locations[key] }
        if let known { return known }
        let location = GSettingsPath(settingsKey: key)
        locked {
            if locations.count >= 4096 { locations.removeAll(keepingCapacity: true) }
            locations[key] = location
        }
        return location
    }

    // MARK: The connection

    /// Whether the connection is open (lock held); the first call starts connecting, on
    /// a thread of its own, so that no caller waits for the bus beyond its own bound (a
    /// bus that accepts the connection and never answers costs one ``loadTimeout``).
    private func connect() -> Bool {
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

    private static let connectThread: GThreadFunc = { context in
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
    private func connected(_ bus: OpaquePointer?, reason: String) {
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
    private func send(_ message: OpaquePointer) -> UInt32 {
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

    // MARK: Driving the engine

    /// Carries out the engine's actions (lock held), until it asks for nothing more.
    private func run() {
        changeCount &+= 1
        while true {
            let actions = engine.takeActions()
            if actions.isEmpty { return }
            for action in actions { carryOut(action) }
        }
    }

    private func carryOut(_ action: ClientAction<WireValue>) {
        switch action {
        case .subscribe(let domain):
            if names.subscribesAtDoor {
                let message = Messages.call(names, interface: BusNames.sandboxInterface, "Subscribe", [Messages.strings([domain.name])])
                g_dbus_message_set_flags(message, G_DBUS_MESSAGE_FLAGS_NO_REPLY_EXPECTED)
                send(message)
            } else {
                send(Messages.busCall("AddMatch", names.rule(domain: domain.name)))
            }
        case .unsubscribe:
            break
        case .load(let domain, let token):
            // Behind the subscription, both at once: the load is one round trip.
            let forced = send(Messages.call(names, "ForcedKeys", [g_variant_new_string(domain.name)]))
            let values = send(Messages.call(names, "ReadDomain", [g_variant_new_string(domain.name)]))
            guard forced != 0, values != 0 else {
                engine.loadFailed(domain, token: token, reason: "the call could not be sent")
                return
            }
            calls[forced] = .forcedKeys(domain, token: token)
            calls[values] = .readDomain(domain, token: token)
            loads[token] = LoadAnswers()
        case .flushNeeded(let domain):
            // At once, as dconf does: the writes made while this one is in flight merge.
            engine.flush(domain)
        case .apply(let domain, let set, let remove, let token):
            let serial = send(
                Messages.call(
                    names, "Apply",
                    [
                        g_variant_new_string(domain.name), Messages.dictionary(set), Messages.strings(remove),
                    ]))
            if serial == 0 {
                engine.writeFailed(domain, token: token, reason: "the call could not be sent")
            } else {
                calls[serial] = .write(domain, token: token)
            }
        case .replace(let domain, _, let token):
            engine.writeFailed(domain, token: token, reason: "the GSettings backend replaces no domain")
        case .loadFinished(let domain, let loaded):
            g_cond_broadcast(&lock.pointee.cond)
            if let snapshot = snapshots.removeValue(forKey: domain) { snapshotReplaced(snapshot, domain, loaded: loaded) }
            if answeredEarly.contains(domain) { news.paths.append(domain) }
            if !loaded {
                news.reports.append(
                    "prefsd: GSettings values of " + GSettingsPath.settingsPath(ofDomain: domain.name) + " are the schema defaults: prefsd could not be reached"
                )
            }
        case .changed(let domain, let keys, let byWrite):
            // The backend's own writes are told with GSettings' origin tag, by `write`.
            if !byWrite { news.keys.append((domain, keys)) }
        case .forcedChanged(let domain, let keys):
            news.writable.append((domain, keys))
        case .writeFailed(let domain, _, let reason):
            news.reports.append("prefsd: a GSettings change under " + GSettingsPath.settingsPath(ofDomain: domain.name) + " was not saved: " + reason)
        case .writesSettled:
            g_cond_broadcast(&lock.pointee.cond)
        case .writeEnded:
            // GSettings waits for no single write: failures are reported by `writeFailed`.
            break
        }
    }

    // MARK: What comes from the bus

    private static let filterFunction: GDBusMessageFilterFunction = { _, message, incoming, context in
        guard incoming != 0, let message, let context else { return message }
        let backend = Unmanaged<Backend>.fromOpaque(context).takeUnretainedValue()
        if backend.received(message) {
            g_object_unref(UnsafeMutableRawPointer(message))
            return nil
        }
        return message
    }

    private static let releaseFunction: GDestroyNotify = { context in
        guard let context else { return }
        Unmanaged<Backend>.fromOpaque(context).release()
    }

    /// Handles a message from the bus (GDBus's worker thread); returns whether it was an
    /// answer to the backend's own call (consumed).
    private func received(_ message: OpaquePointer) -> Bool {
        let type = g_dbus_message_get_message_type(message)
        switch type {
        case G_DBUS_MESSAGE_TYPE_METHOD_RETURN, G_DBUS_MESSAGE_TYPE_ERROR:
            let replySerial = g_dbus_message_get_reply_serial(message)
            return locked {
                guard let call = calls.removeValue(forKey: replySerial) else { return false }
                answered(call, message, isError: type == G_DBUS_MESSAGE_TYPE_ERROR)
                run()
                return true
            }
        case G_DBUS_MESSAGE_TYPE_SIGNAL:
            guard let sender = g_dbus_message_get_sender(message), let member = g_dbus_message_get_member(message) else { return false }
            let from = String(cString: sender)
            let name = String(cString: member)
            if from == "org.freedesktop.DBus" {
                guard name == "NameOwnerChanged", Messages.string(message, 0) == names.busName else { return false }
                let owner = Messages.string(message, 2) ?? ""
                locked {
                    engine.ownerChanged(to: owner.isEmpty ? nil : owner)
                    run()
                }
                return false
            }
            guard let interface = g_dbus_message_get_interface(message), String(cString: interface) == BusNames.interface,
                let domainName = Messages.string(message, 0)
            else { return false }
            let serial = g_dbus_message_get_serial(message)
            let domain = ClientDomain(domainName)
            if name == "Changed" {
                let changed = Messages.values(message, 1)
                let removed = Messages.stringList(message, 2)
                let invalidated = Messages.stringList(message, 3)
                locked {
                    engine.changed(domain, changed: changed, removed: removed, invalidated: invalidated, serial: serial, sender: from)
                    run()
                }
            } else if name == "ForcedKeysChanged" {
                let keys = Messages.stringList(message, 1)
                locked {
                    engine.forcedKeysChanged(domain, keys: Set(keys), serial: serial, sender: from)
                    run()
                }
            }
            return false
        default:
            return false
        }
    }

    /// An answer to one of the backend's calls (lock held).
    private func answered(_ call: Call, _ message: OpaquePointer, isError: Bool) {
        let serial = g_dbus_message_get_serial(message)
        let sender = g_dbus_message_get_sender(message).map { String(cString: $0) }
        switch call {
        case .forcedKeys(let domain, let token):
            guard var answers = loads[token] else { return }
            if isError { answers.failure = Messages.errorText(message) } else { answers.forced = (Messages.stringList(message, 0), serial) }
            answers.answered += 1
            finishLoad(domain, token: token, answers)
        case .readDomain(let domain, let token):
            guard var answers = loads[token] else { return }
            if !isError {
                answers.values = (Messages.values(message, 0), serial, sender)
            } else if g_dbus_message_get_error_name(message).map({ String(cString: $0) }) == BusNames.notFound {
                // No such domain: nothing to stamp, so every signal counts as newer.
                answers.values = ([:], 0, sender)
            } else {
                answers.failure = Messages.errorText(message)
            }
            answers.answered += 1
            finishLoad(domain, token: token, answers)
        case .write(let domain, let token):
            if isError {
                let name = g_dbus_message_get_error_name(message).map { String(cString: $0) } ?? ""
                // prefsd refused the batch for one of its keys: each is sent again alone.
                let refused = name.hasPrefix(BusNames.errorPrefix) || name == "org.freedesktop.DBus.Error.InvalidArgs"
                engine.writeFailed(domain, token: token, reason: Messages.errorText(message), retryKeysAlone: refused)
            } else {
                engine.writeAnswered(domain, token: token, serial: serial, sender: sender)
            }
        }
    }

    private func finishLoad(_ domain: ClientDomain, token: UInt64, _ answers: LoadAnswers) {
        guard answers.answered == 2 else {
            loads[token] = answers
            return
        }
        loads[token] = nil
        if let failure = answers.failure {
            engine.loadFailed(domain, token: token, reason: failure)
        } else if let values = answers.values, let forced = answers.forced {
            engine.loadAnswered(
                domain, token: token, values: values.values, forced: Set(forced.keys),
                serial: values.serial, forcedSerial: forced.serial, sender: values.sender)
        }
    }

    // MARK: Telling GSettings

    /// At most this many keys go in one `g_settings_backend_keys_changed` (GSettings
    /// asserts on more than 255 keys of one object changing in one call).
    static let keysPerSignal = 100

    private func withInstance(_ body: (UnsafeMutablePointer<GSettingsBackend>) -> Void) {
        guard let object = g_weak_ref_get(instance) else { return }
        defer { g_object_unref(object) }
        body(object.assumingMemoryBound(to: GSettingsBackend.self))
    }

    private func deliver(_ news: News) {
        for message in news.reports { prefsd_log_message(message) }
        withInstance { backend in
            for (domain, keys) in news.writable {
                for key in keys {
                    let full = GSettingsPath.settingsPath(ofDomain: domain.name) + key
                    g_settings_backend_writable_changed(backend, full)
                }
            }
            for domain in news.paths {
                let path = GSettingsPath.settingsPath(ofDomain: domain.name)
                g_settings_backend_path_changed(backend, path, nil)
                g_settings_backend_path_writable_changed(backend, path)
            }
            for (domain, keys) in news.keys {
                // Only keys a GSettings key maps to (others are not GSettings'), by directory.
                var mapped: [String] = []
                for key in keys where GSettingsPath(domain: domain.name, key: key) != nil { mapped.append(key) }
                notify(backend, directory: GSettingsPath.settingsPath(ofDomain: domain.name), keys: mapped, tag: nil)
            }
        }
    }

    /// Tells GSettings that the full keys `keys` changed, with the write's origin tag.
    private func keysChanged(_ keys: [String], tag: UnsafeMutableRawPointer?) {
        withInstance { backend in
            if keys.count == 1 {
                g_settings_backend_changed(backend, keys[0], tag)
                return
            }
            var byDirectory: [String: [String]] = [:]
            for key in keys {
                guard let location = GSettingsPath(settingsKey: key) else { continue }
                byDirectory[GSettingsPath.settingsPath(ofDomain: location.domain), default: []].append(location.key)
            }
            for (directory, items) in byDirectory.sorted(by: { $0.key < $1.key }) {
                notify(backend, directory: directory, keys: items, tag: tag)
            }
        }
    }

    private func notify(_ backend: UnsafeMutablePointer<GSettingsBackend>, directory: String, keys: [String], tag: UnsafeMutableRawPointer?) {
        var start = 0
        while start < keys.count {
            let end = min(start + Self.keysPerSignal, keys.count)
            let copies: [UnsafeMutablePointer<CChar>?] = keys[start..<end].map { strdup($0) }
            let list: [UnsafePointer<gchar>?] = copies.map { $0.map { UnsafePointer($0) } } + [nil]
            list.withUnsafeBufferPointer { g_settings_backend_keys_changed(backend, directory, $0.baseAddress, tag) }
            for copy in copies { free(copy) }
            start = end
        }
    }

    /// Drops the message filter (the GObject is being finalized); the filter's reference
    /// is released by GDBus once no filter call runs.
    func close() {
        let open: (OpaquePointer, guint)? = locked {
            defer { connection = .failed }
            if case .open(let bus) = connection { return (bus, filter) }
            return nil
        }
        if let (bus, filter) = open {
            g_dbus_connection_remove_filter(bus, filter)
            g_object_unref(UnsafeMutableRawPointer(bus))
        }
    }
}
