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
/// answers from it, and reads answer from the snapshot (its validity checked each time)
/// until the load has come; a snapshot found stale falls back to waiting for the load.
///
/// **Connecting.** The connection is made on a thread of its own. When the first domain
/// GSettings follows has a valid snapshot, that thread starts only once the program's main
/// loop runs (an idle source of the caller's thread-default context), or at once when a
/// read finds a snapshot stale, a write needs prefsd or another domain has no snapshot: a
/// short program such as `gsettings get` then reads and exits without starting a thread or
/// touching the bus. What changed meanwhile is told to GSettings when the load comes, as
/// the differences from the snapshot.
///
/// `@unchecked Sendable`: GSettings' threads and GDBus's worker share one instance, and
/// every stored property that changes is read and written only with `lock` held (the
/// others are set in `init` and never change).
final class Backend: @unchecked Sendable {
    /// How long loading a domain may take, activation of prefsd included.
    static let loadTimeout: gint64 = 5_000_000
    /// How long `sync` waits for the writes made so far.
    static let syncTimeout: gint64 = 25_000_000

    enum Connection {
        case notYet
        case connecting
        case open(OpaquePointer)
        case failed
    }

    /// What a call in flight was, by its message serial.
    enum Call {
        case load(ClientDomain, token: UInt64, part: ClientLoadPart)
        case write(ClientDomain, token: UInt64)
    }

    /// What to tell GSettings once the mutex is released.
    struct News {
        var keys: [(ClientDomain, [String])] = []
        var writable: [(ClientDomain, [String])] = []
        var paths: [ClientDomain] = []
        var reports: [String] = []
        var isEmpty: Bool { keys.isEmpty && writable.isEmpty && paths.isEmpty && reports.isEmpty }
    }

    let lock: UnsafeMutablePointer<prefsd_lock>
    let names = BusNames.current()
    /// The GSettingsBackend, weakly: news that comes while it is finalized is dropped.
    let instance: UnsafeMutablePointer<GWeakRef>

    // Guarded by `lock`.
    var engine = ClientEngine<WireValue>()
    var connection = Connection.notYet
    var filter: guint = 0
    var calls: [UInt32: Call] = [:]
    /// Domains whose first load outlived a reader's wait: the reader answered the schema
    /// default, so GSettings hears of the whole directory once the load ends.
    var answeredEarly: Set<ClientDomain> = []
    /// Domains asked for while the connection is being made.
    var wanted: Set<ClientDomain> = []
    /// GSettings full keys already mapped (`nil`: not mappable).
    var locations: [String: GSettingsPath?] = [:]
    var news = News()
    /// Moves after every change of what readers may see (every engine step).
    var changeCount: UInt64 = 0
    var rendered = RenderedValues()
    /// The snapshots first reads answered from, by domain, kept until the domain's load
    /// has come (then GSettings hears of what the load changed).
    var snapshots: [ClientDomain: Snapshot] = [:]
    /// Domains whose snapshot was looked for (once per domain and process).
    var snapshotsSought: Set<ClientDomain> = []
    /// This process's snapshot directory (none inside a sandbox: the door decides there).
    let snapshotDirectory: String?
    /// Whether the connection is to start when the program's main loop next runs.
    var connectsWhenIdle = false

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

    func locked<T>(_ body: () -> T) -> T {
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
    /// read soon), unless the first domain's snapshot may answer: then ``subscribe(_:)``
    /// decides.
    func start() {
        locked { if snapshotDirectory == nil { _ = connect() } }
    }

    /// Starts loading the domain of the GSettings directory `path`, without waiting.
    func subscribe(_ path: String) {
        guard let name = GSettingsPath.domain(ofDirectory: path) else { return }
        locked {
            // A domain with a valid snapshot, while nothing has needed the bus yet: its
            // load waits for the main loop (see `snapshot(_:)`).
            if case .notYet = connection, snapshot(ClientDomain(name)) != nil { return }
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
    func waitForLoad(_ domain: ClientDomain) {
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
    /// domain's load is started without waiting for it: at once when the connection is
    /// made or being made, else once the program's main loop runs.
    func snapshot(_ domain: ClientDomain) -> Snapshot? {
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
        switch connection {
        case .open:
            engine.follow(domain)
            run()
        case .connecting:
            wanted.insert(domain)
        case .notYet:
            wanted.insert(domain)
            connectWhenIdle()
        case .failed:
            break
        }
        return snapshot
    }

    /// The load of a domain read from a snapshot has come (lock held): GSettings hears of
    /// every key whose value or writability the load changed (or of the whole directory,
    /// when the load failed and the schema defaults answer now).
    func snapshotReplaced(_ snapshot: Snapshot, _ domain: ClientDomain, loaded: Bool) {
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
    func location(_ key: String) -> GSettingsPath? {
        let known: GSettingsPath?? = locked { locations[key] }
        if let known { return known }
        let location = GSettingsPath(settingsKey: key)
        locked {
            if locations.count >= 4096 { locations.removeAll(keepingCapacity: true) }
            locations[key] = location
        }
        return location
    }

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
