import DBus
import Dconf
import Dispatch
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesStore
import Synchronization

/// The prefsd service: serves the domains of a store, volatile domains and forced keys
/// as the `io.github.prefsd.Preferences1` object on a bus connection.
///
/// Calls run on the connection's queue and touch the in-memory state under a lock that is
/// never held across I/O. A persistent change is answered, and its `Changed` emitted, from
/// the store's completion once it is durable; completions arrive in commit order, so
/// signals do too.
public final class PreferencesService: Sendable {
    /// What the lock guards. The domains are mutated in place, never copied out, so a
    /// write costs the same with 10 or 100,000 keys stored.
    struct State: Sendable {
        /// Calls that arrived before the service was ready, in order; at most
        /// ``ServiceLimits/waitingCalls`` of them, of ``ServiceLimits/waitingBytes``.
        var waiting: [(call: DBusMessage, bytes: Int)] = []
        /// The bytes of the calls in `waiting`, as marshalled on the bus.
        var waitingBytes = 0
        /// Whether calls are dispatched as they arrive (after the waiting ones).
        var ready = false
        /// Whether reads of single domains are dispatched as they arrive while the whole
        /// store loads (when no call waits before them; see `PreferencesService+Loading.swift`).
        var readsServed = false
        /// Whether waiting calls are being dispatched: a read arriving meanwhile waits too,
        /// so that it does not overtake them.
        var draining = false
        /// The domains, once loaded.
        var domains: DomainState?
        /// The store, once open.
        var store: DomainStore?
        /// Whether dconf's calls are refused: prefsd is stopping.
        var dconfClosed = false
    }

    /// The connection the service is registered on (the bus in prefsd).
    let connection: any ServiceConnection
    /// The door for sandboxed applications, when the service has one.
    let door: SandboxDoor?
    /// The connection that owns dconf's name and serves dconf's objects, when it is not
    /// `connection` (see `PreferencesService+Dconf.swift`).
    let dconfConnection: (any ServiceConnection)?
    /// The connection that owns xfconf's name and serves xfconf's object, when it is not
    /// `connection` (see `PreferencesService+Xfconf.swift`).
    let xfconfConnection: (any ServiceConnection)?
    /// Who is behind each sender; every call waits for its sender to be known.
    let gate: CallerGate
    let configuration: ServiceConfiguration
    let logger: Logger
    let standardInterfaces: StandardInterfaces
    /// `Read`'s replies, encoded once per value read.
    let readReplies = ReadReplies()
    let state = Mutex(State())
    let watcher = Mutex<DirectoryWatcher?>(nil)
    /// Opens once the whole store is loaded (see `PreferencesService+Loading.swift`).
    let loaded = LoadGate()
    /// The roaming folder's coordinator, once started (see `PreferencesService+Roaming.swift`).
    let roaming = Mutex<RoamingCoordinator?>(nil)
    /// The administrator's defaults and dconf databases, followed live; its queue runs
    /// every reload of administrator settings, managed domains included.
    let administration = AdministratorWatch()
    /// The snapshots of loaded domains GSettings programs map (see `SnapshotKeeper`).
    let snapshots: SnapshotKeeper?
    /// dconf's protocol and database file, when prefsd serves dconf (see `PreferencesService+Dconf.swift`).
    let dconf: DconfFront?
    /// xfconf's protocol, when prefsd serves xfconf (see `PreferencesService+Xfconf.swift`).
    let xfconf: XfconfFront?
    /// The sandboxed applications prefsd has served (see `SandboxedApplications.swift`).
    let applications: SandboxedApplications
    /// The installed GSettings schemas values are held to, followed live (see `SchemaWatch.swift`).
    let schemas: SchemaWatch
    var managed: ManagedDomains {
        ManagedDomains(
            directory: configuration.managedDirectory,
            requireRootOwnership: configuration.requireRootOwnedManagedDirectory,
            limits: configuration.limits,
            logger: logger
        )
    }

    /// Makes a service for `connection` (and `door`, for sandboxed applications,
    /// `dconfConnection` for dconf's name, when prefsd serves dconf, and `xfconfConnection`
    /// for xfconf's, when it serves xfconf: without them, their objects are served on
    /// `connection`). Call `register()` and then `start(store:)`.
    public init(
        connection: any ServiceConnection, door: SandboxDoor? = nil, dconfConnection: (any ServiceConnection)? = nil,
        xfconfConnection: (any ServiceConnection)? = nil, configuration: ServiceConfiguration, logger: Logger
    ) {
        self.connection = connection
        self.door = door
        self.dconfConnection = dconfConnection
        self.xfconfConnection = xfconfConnection
        // A sender that left before it was identified runs as the host's on the main name
        // only: no sandboxed application can reach that name (see `Identification`).
        gate = CallerGate(
            connection: connection, logger: logger, bounds: CallerGate.Bounds(configuration.limits),
            trustsDeparted: { call in
                !(door?.serves(call) ?? false) && !Self.isForDconf(call, dconfConnection: dconfConnection)
                    && !Self.isForXfconf(call, xfconfConnection: xfconfConnection)
            })
        self.configuration = configuration
        self.logger = logger
        standardInterfaces = .preferences(version: configuration.version)
        snapshots = configuration.snapshotDirectory.map { SnapshotKeeper(directory: $0, logger: logger) }
        let applications = SandboxedApplications(storeDirectory: configuration.storeDirectory)
        self.applications = applications
        dconf = configuration.dconf.map { DconfFront(files: $0, applications: applications, logger: logger) }
        schemas = SchemaWatch(directories: configuration.schemaDirectories, logger: logger)
        schemas.start()
        xfconf = configuration.xfconf ? XfconfFront() : nil
    }

    /// Exports the object on the connection. Calls that arrive before `start(store:)`
    /// wait and are answered once the store is loaded, so a client that activated the
    /// service never sees a missing object.
    public func register() throws(DBusError) {
        connection.setMaximumMessageSize(configuration.limits.maximumMessageBytes)
        try connection.registerObject(
            path: PreferencesBus.objectPath, quickAnswer: { [self] call in quickRead(call) }, handler: { [self] call in receive(call) })
        try registerDoor()
        try registerDconf()
        try registerXfconf()
    }

    /// Flips stale and removes the snapshots an earlier prefsd left on this bus (call before
    /// taking the bus name); `start(store:)` clears them again before answering anything.
    public func clearSnapshots() {
        if let directory = snapshots?.directory { SnapshotKeeper.clear(directory: directory) }
    }

    /// The domains to write snapshots of at start, kept beside the store.
    var snapshotDomains: SnapshotDomainList { SnapshotDomainList(storeDirectory: configuration.storeDirectory) }

    /// Whether prefsd serves dconf's protocol (started with it, and dconf's database taken in).
    public var servesDconf: Bool { dconf.map { $0.refusal == nil } ?? false }

    /// Waits until every accepted write is durable and answered, then closes the store;
    /// dconf's calls are refused from the start, and dconf's file holds every change
    /// accepted before, as the user's xfconf channel files do, so the connections owning
    /// dconf's and xfconf's names can be closed after.
    public func stop() {
        closeDconf()
        // The full load finishes first: it reads the store that is closed below.
        if state.withLock({ $0.store != nil }) { try? loaded.wait() }
        if let domains = snapshots?.stop(), !snapshotDomains.write(domains) {
            logger.info("the list of domains to keep snapshots of could not be written", metadata: ["file": "\(snapshotDomains.path)"])
        }
        watcher.withLock { $0?.cancel() }
        schemas.stop()
        stopRoaming()
        administration.stop()
        // The types of xfconf's properties read while the store is open, for the channel files.
        if let xfconf, state.withLock({ $0.store != nil }) { xfconf.start { loadXfconfTypes() } }
        state.withLock { $0.store }?.close()
        // Every commit is done: the user's channel files are written from what it holds.
        if xfconf != nil, state.withLock({ $0.domains != nil }) { writeXfconfChannels() }
        // The last commits' jobs are queued by now: dconf's file is left holding them.
        dconf?.finish()
        connection.flush()
        dconfConnection?.flush()
        xfconfConnection?.flush()
    }
}
