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
    /// Who is behind each sender; every call waits for its sender to be known.
    let gate: CallerGate
    let configuration: ServiceConfiguration
    let logger: Logger
    private let standardInterfaces: StandardInterfaces
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
    /// The sandboxed applications prefsd has served (see `SandboxedApplications.swift`).
    let applications: SandboxedApplications
    private var managed: ManagedDomains {
        ManagedDomains(
            directory: configuration.managedDirectory,
            requireRootOwnership: configuration.requireRootOwnedManagedDirectory,
            limits: configuration.limits,
            logger: logger
        )
    }

    /// Makes a service for `connection` (and `door`, for sandboxed applications, and
    /// `dconfConnection` for dconf's name, when prefsd serves dconf: without it, dconf's
    /// objects are served on `connection`). Call `register()` and then `start(store:)`.
    public init(
        connection: any ServiceConnection, door: SandboxDoor? = nil, dconfConnection: (any ServiceConnection)? = nil,
        configuration: ServiceConfiguration, logger: Logger
    ) {
        self.connection = connection
        self.door = door
        self.dconfConnection = dconfConnection
        // A sender that left before it was identified runs as the host's on the main name
        // only: no sandboxed application can reach that name (see `Identification`).
        gate = CallerGate(
            connection: connection, logger: logger, bounds: CallerGate.Bounds(configuration.limits),
            trustsDeparted: { call in
                !(door?.serves(call) ?? false) && !Self.isForDconf(call, dconfConnection: dconfConnection)
            })
        self.configuration = configuration
        self.logger = logger
        standardInterfaces = .preferences(version: configuration.version)
        snapshots = configuration.snapshotDirectory.map { SnapshotKeeper(directory: $0, logger: logger) }
        let applications = SandboxedApplications(storeDirectory: configuration.storeDirectory)
        self.applications = applications
        dconf = configuration.dconf.map { DconfFront(files: $0, applications: applications, logger: logger) }
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
    }

    /// Flips stale and removes the snapshots an earlier prefsd left on this bus (call before
    /// taking the bus name); `start(store:)` clears them again before answering anything.
    public func clearSnapshots() {
        if let directory = snapshots?.directory { SnapshotKeeper.clear(directory: directory) }
    }

    /// Starts answering, the waiting calls first. With dconf's protocol the whole store is
    /// loaded first (dconf's file is made from every value); without it, the store loads
    /// beside the calls, and a read of a domain not loaded yet reads that domain alone (see
    /// `PreferencesService+Loading.swift`).
    /// - Throws: `StoreError` when the store cannot be read.
    public func start(store: DomainStore) throws(StoreError) {
        try start(store: store, holdingFullLoadUntil: nil)
    }

    /// ``start(store:)``, whose full load (without dconf's protocol) waits for `hold` first:
    /// what tests use to see the service while domains load one by one.
    func start(store: DomainStore, holdingFullLoadUntil hold: DispatchSemaphore?) throws(StoreError) {
        // Watch before reading, so no change to the managed directory slips between the two.
        watchManagedDirectory()
        let domains: DomainState
        if dconf == nil {
            // Nothing reloads the administrator's settings until every domain is loaded: the
            // signals of a reload compare values of every domain it touches.
            administration.queue.suspend()
            domains = DomainState.loading(limits: configuration.limits)
        } else {
            domains = try loadWhole(store)
        }
        start(domains, store: store, hold: hold)
    }

    /// The whole store as the running state, dconf's database taken in and dconf's file made
    /// from it.
    private func loadWhole(_ store: DomainStore) throws(StoreError) -> DomainState {
        var committed = try store.loadAll()
        // A database a dconf-service wrote is taken in before anything else is written.
        if let dconf {
            switch takeInDconfDatabase(dconf.files, store: store, committed: committed) {
            case .nothing:
                break
            case .taken(let keys, let removed, let aside):
                logger.notice(
                    "took in dconf's database",
                    metadata: ["file": "\(dconf.files.databasePath)", "keys": "\(keys)", "removed": "\(removed)", "keptAside": "\(aside)"])
                committed = try store.loadAll()
            case .damaged(let aside, let reason):
                logger.error(
                    "what lies at dconf's database path is not a database prefsd can read (damaged, or not a regular file, or too large) and was moved aside; dconf's file is made again from the store",
                    metadata: ["file": "\(dconf.files.databasePath)", "movedTo": "\(aside)", "error": "\(reason)"])
            case .refused(let reason):
                logger.error("prefsd does not serve dconf: \(reason)")
                dconf.refuse(reason)
            }
        }
        var domains = DomainState(committed: committed, limits: configuration.limits)
        domains.leftOut = store.leftOutKeys
        // dconf's file is made from the store before any call is answered.
        if let dconf, !dconf.isRefused {
            dconf.start(domains: domains.committed, types: try store.loadGVariantTypes(), service: self)
        }
        return domains
    }

    /// Puts `loading` (the whole store, or a state that loads it beside the calls) in force
    /// with what the administrator forces and sets, and answers the calls.
    private func start(_ loading: DomainState, store: DomainStore, hold: DispatchSemaphore?) {
        var domains = loading
        _ = domains.replaceForced(with: managed.load(previous: [:]))
        _ = domains.replaceAdministrator(with: loadAdministratorSettings())
        let whole = domains.isComplete
        let count = domains.committed.count
        if whole { loaded.open(failure: nil) }
        state.withLock { state in
            state.domains = domains
            state.store = store
            state.readsServed = !whole
        }
        // Before any call is answered: what an earlier prefsd left is cleared first.
        snapshots?.start { [self] domain in snapshotBody(domain) }
        // The domains the last prefsd had snapshots of: written again now, off the reply path.
        snapshots?.warm(snapshotDomains.read(limit: SnapshotKeeper.maximumSnapshots))
        // Without the whole store, only the reads at the head of the waiting calls, before
        // the whole store starts loading beside them.
        let answered = answerWaiting(readsOnly: !whole)
        if !whole { loadRest(of: store, after: hold) }
        logger.info("serving", metadata: ["domains": whole ? "\(count)" : "loading", "waitingCalls": "\(answered)"])
        // Without the whole store, `loadRest(of:)` does the rest once it is loaded.
        guard whole else { return }
        configuration.afterLoad?()
        // A managed file changed while the store loaded is put in force now, on the
        // watcher's queue like every reload.
        watcher.withLock { $0?.trigger() }
        startRoaming()
        administration.schedule { [self] in reloadAdministratorSettings() }
    }

    /// Answers the calls that waited, in order, until none is left (`readsOnly`: until none
    /// is left or the next is not a read of single domains); only then are new calls
    /// dispatched as they arrive (once every call may be: `ready`), so none overtakes an
    /// older one. Answers how many it dispatched.
    func answerWaiting(readsOnly: Bool) -> Int {
        var answered = 0
        while true {
            let batch = state.withLock { state -> [DBusMessage] in
                let count = readsOnly ? (state.waiting.firstIndex { !Self.readsSingleDomains($0.call) } ?? state.waiting.count) : state.waiting.count
                guard count > 0 else {
                    state.draining = false
                    if !readsOnly { state.ready = true }
                    return []
                }
                state.draining = true
                let taken = state.waiting.prefix(count)
                state.waitingBytes -= taken.reduce(0) { $0 + $1.bytes }
                state.waiting.removeFirst(count)
                return taken.map(\.call)
            }
            if batch.isEmpty { break }
            for call in batch { dispatch(call) }
            answered += batch.count
        }
        return answered
    }

    /// Whether `call` is a `Read`, `ReadDomain` or `Lookup` of the preferences interface:
    /// what is answered before the whole store is loaded.
    static func readsSingleDomains(_ call: DBusMessage) -> Bool {
        guard call.interface == PreferencesBus.interface, let member = call.member else { return false }
        switch PreferencesMethod(rawValue: member) {
        case .read?, .readDomain?, .lookup?: return true
        default: return false
        }
    }

    /// Follows the managed directory: a file added, edited or removed takes effect at once
    /// and emits `Changed` for every value readers see change.
    private func watchManagedDirectory() {
        let directory = configuration.managedDirectory
        let started = DirectoryWatcher(directory: directory) { [self] in
            administration.queue.async { [self] in reloadManagedDomains() }
        }
        if case .polling(let reason) = started.mode {
            logger.debug("polling the managed directory every second", metadata: ["directory": "\(directory.path)", "reason": "\(reason)"])
        }
        watcher.withLock { $0 = started }
    }

    /// Reads the managed directory again and puts what it forces in force. Runs on the
    /// administration queue only, so reloads never overlap.
    private func reloadManagedDomains() {
        let previous = state.withLock { $0.domains?.forced ?? [:] }
        let forced = managed.load(previous: previous)
        let update = state.withLock { $0.domains?.replaceForced(with: forced) } ?? ForcedUpdate()
        let domains = Set(update.changes.map(\.domain)).union(update.forcedKeys.keys)
        if !domains.isEmpty {
            logger.info("managed preferences changed", metadata: ["domains": "\(domains.map(\.rawValue).sorted())"])
        }
        announce(update)
    }

    /// Runs `body` on the running state (`nil` before the store is loaded, or when it could
    /// not be read), once the whole store is loaded.
    func withDomains<Result: Sendable>(_ body: (inout DomainState) -> Result) -> Result? {
        guard (try? waitUntilLoaded()) != nil else { return nil }
        return state.withLock { state in
            guard state.domains != nil else { return nil }
            return body(&state.domains!)
        }
    }

    /// Announces what a change of an administrator's settings changed: `ForcedKeysChanged`
    /// first, then `Changed`, and notes in the journal (who = `managed`).
    func announce(_ update: ForcedUpdate) {
        for (domain, keys) in update.forcedKeys.sorted(by: { $0.key < $1.key }) {
            emitSignal(
                .signal(
                    path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                    member: PreferencesBus.forcedKeysChangedSignal, body: [.string(domain.rawValue), .stringArray(keys)]
                ))
        }
        for change in update.changes { emit(change, volatile: false) }
        // The journal notes who changed what readers see (no stored value changes).
        if let store = state.withLock({ $0.store }) {
            for (_, notes) in update.notes.sorted(by: { $0.key < $1.key }) {
                store.commit(notes, who: HistoryOrigin.managed) { [logger] result in
                    if case .failure(let error) = result {
                        logger.warning("a managed change was not recorded in the history", metadata: ["error": "\(error)"])
                    }
                }
            }
        }
    }

    /// The domains to write snapshots of at start, kept beside the store.
    var snapshotDomains: SnapshotDomainList { SnapshotDomainList(storeDirectory: configuration.storeDirectory) }

    /// Whether prefsd serves dconf's protocol (started with it, and dconf's database taken in).
    public var servesDconf: Bool { dconf.map { $0.refusal == nil } ?? false }

    /// Waits until every accepted write is durable and answered, then closes the store;
    /// dconf's calls are refused from the start, and dconf's file holds every change
    /// accepted before, so the connection owning dconf's name can be closed after.
    public func stop() {
        closeDconf()
        // The full load finishes first: it reads the store that is closed below.
        if state.withLock({ $0.store != nil }) { try? loaded.wait() }
        if let domains = snapshots?.stop(), !snapshotDomains.write(domains) {
            logger.info("the list of domains to keep snapshots of could not be written", metadata: ["file": "\(snapshotDomains.path)"])
        }
        watcher.withLock { $0?.cancel() }
        stopRoaming()
        administration.stop()
        state.withLock { $0.store }?.close()
        // The last commits' jobs are queued by now: dconf's file is left holding them.
        dconf?.finish()
        connection.flush()
        dconfConnection?.flush()
    }

    func receive(_ call: DBusMessage) {
        if state.withLock({ $0.ready }) { return dispatch(call) }
        // The store is loading: hold the call, within the bounds (measured outside the lock).
        let size = DBusValue.structure(call.body).marshalledSize
        let limits = configuration.limits
        enum Admission {
            case dispatch, held
            case refused(calls: Int, bytes: Int)
        }
        let admission = state.withLock { state -> Admission in
            if state.ready { return .dispatch }
            if state.readsServed, !state.draining, state.waiting.isEmpty, Self.readsSingleDomains(call) { return .dispatch }
            guard state.waiting.count < limits.waitingCalls, state.waitingBytes + size <= limits.waitingBytes else {
                return .refused(calls: state.waiting.count, bytes: state.waitingBytes)
            }
            // Without its libdbus message, which libdbus would count as unread (see
            // `DBusMessage.detached()`).
            state.waiting.append((call.detached(), size))
            state.waitingBytes += size
            return .held
        }
        switch admission {
        case .dispatch:
            dispatch(call)
        case .held:
            break
        case .refused(let calls, let bytes):
            reply(
                to: call, error: StandardErrorName.limitsExceeded,
                "prefsd is still loading its store and holds \(calls) calls (\(bytes) bytes) until then; this one (\(size) bytes) would pass the most it holds, \(limits.waitingCalls) calls or \(limits.waitingBytes) bytes (prefsd --max-waiting-calls, --max-waiting-size): try again once it has loaded"
            )
        }
    }

    private func dispatch(_ call: DBusMessage) {
        if let refusal = gate.admit(call, then: { [self] call, caller in dispatch(call, as: caller) }) {
            reply(to: call, error: StandardErrorName.limitsExceeded, refusal)
        }
    }

    private func dispatch(_ call: DBusMessage, as caller: CallerIdentity) {
        note(caller)
        if let door, door.serves(call), let answer = door.answer(call, from: caller) {
            guard !call.noReplyExpected else { return }
            return send(answer, over: door.connection)
        }
        if isDconfCall(call) { return handleDconfCall(call, as: caller) }
        if let answer = standardInterfaces.answer(call) {
            guard !call.noReplyExpected else { return }
            return send(answer)
        }
        switch call.interface {
        case nil, PreferencesBus.interface?:
            handlePreferencesCall(call, as: caller)
        case let other?:
            reply(to: call, error: StandardErrorName.unknownInterface, "the object \(PreferencesBus.objectPath) has no interface \(other)")
        }
    }

    // MARK: The preferences interface

    private func handlePreferencesCall(_ call: DBusMessage, as caller: CallerIdentity) {
        guard let member = call.member, let method = PreferencesMethod(rawValue: member) else {
            return reply(
                to: call, error: StandardErrorName.unknownMethod,
                "\(PreferencesBus.interface) has no method \(call.member ?? "(none)")")
        }
        guard call.hasSignature(method.inputSignature) else {
            return reply(
                to: call, error: StandardErrorName.invalidArgs,
                "\(member) takes arguments of type (\(method.inputSignature)), not (\(call.signature))")
        }
        do {
            let arguments = Arguments(body: try caller.admit(method, call.body), limits: configuration.limits)
            try prepare(method, arguments)
            switch try perform(method, arguments, as: caller) {
            case .answer(let body): reply(to: call, caller.filter(method, answer: body))
            case .encodedAnswer(let body): reply(to: call, body)
            case .effect(let effect, let store, let answer):
                complete(effect, store: store, for: call, answer: answer, who: gate.who(call, as: caller))
            case .revert(let request, let store): revert(request, store: store, for: call, as: caller)
            case .history(let request, let store): history(request, store: store, for: call)
            }
        } catch {
            reply(to: call, error: error.busErrorName, error.description)
        }
        // A load (of the host's) was answered: its snapshot is kept, off the reply path.
        if method == .readDomain, case .host = caller, let snapshots, case .string(let domain)? = call.body.first {
            snapshots.loaded(domain)
        }
    }

    /// What a load of `name` answers (`ReadDomain`'s values, none for a domain that does not
    /// exist, and `ForcedKeys`), as a snapshot's body `(s a{sv} as)`; `nil` when a reply
    /// could not carry it.
    private func snapshotBody(_ name: String) -> [DBusValue]? {
        guard let domain = try? DomainName(name), (try? ensureLoaded([domain])) != nil else { return nil }
        let (entries, forced) = read { ($0.entries(domain: domain) ?? [:], $0.forcedKeys(domain: domain)) }
        let body: [DBusValue] = [.string(name), PropertyListValue.dictionary(entries).dbusValue, .stringArray(forced)]
        guard DBusValue.structure(body).marshalledSize <= configuration.limits.replyBytes else { return nil }
        return body
    }

    enum Outcome: Sendable {
        /// Answer at once with this body.
        case answer([DBusValue])
        /// Answer at once with this body, encoded already (no filter applies to it).
        case encodedAnswer(ReplyBody)
        /// Carry out the effect, then answer with the body.
        case effect(Effect, DomainStore, answer: [DBusValue])
        /// Put a domain back as the journal says it was (`RevertTo`, `RevertKeyTo`).
        case revert(RevertRequest, DomainStore)
        /// Read the journal off the connection's queue and answer from there (`History`).
        case history(HistoryRequest, DomainStore)
    }

    private func perform(_ method: PreferencesMethod, _ arguments: Arguments, as caller: CallerIdentity) throws(PreferencesServiceError) -> Outcome {
        // A sandboxed application's changes are held to its own share of the limits too.
        let application: String? = if case .application(let id) = caller { id } else { nil }
        func change(
            answer: [DBusValue] = [], otherwise: [DBusValue] = [], _ body: (inout DomainState) throws -> Effect?
        ) throws(PreferencesServiceError) -> Outcome {
            try self.change(as: application, answer: answer, otherwise: otherwise, body)
        }
        switch method {
        case .read:
            // Read before with these very arguments: the names were checked then, and the
            // reply encoded then serves while the value stored is the same.
            let (domainText, keyText) = (try arguments.string(0), try arguments.string(1))
            if let known = readReplies.entry(domain: domainText, key: keyText),
                let value = read({ $0.value(domain: known.domain, key: known.key) }), value == known.value
            {
                return .encodedAnswer(known.body)
            }
            let (domain, key) = (try arguments.domain(0), try arguments.key(1))
            guard let value = read({ $0.value(domain: domain, key: key) }) else {
                if read({ $0.isLeftOut(domain: domain, key: key) }) {
                    throw .invalidValue(
                        "the value stored for \(domain) \"\(key)\" cannot be read: it breaks the store's rules (an older prefsd stored it, or the store was changed by hand) and was left out at start; remove it with `prefs delete \(domain) \(key)`"
                    )
                }
                throw .notFound("\(domain) has no key \"\(key)\"")
            }
            let answer = [value.dbusVariant]
            guard let body = readReplies.body(answer, domainText: domainText, keyText: keyText, domain: domain, key: key, value: value)
            else { return .answer(answer) }
            return .encodedAnswer(body)
        case .readDomain:
            let domain = try arguments.domain(0)
            guard let entries = read({ $0.entries(domain: domain) }) else {
                throw .notFound("there is no persistent domain \(domain)")
            }
            return .answer([PropertyListValue.dictionary(entries).dbusValue])
        case .readVolatileDomain:
            let domain = try arguments.domain(0)
            guard let entries = read({ $0.volatileEntries(domain: domain) }) else {
                throw .notFound("there is no volatile domain \(domain)")
            }
            return .answer([PropertyListValue.dictionary(entries).dbusValue])
        case .domains:
            return .answer([.stringArray(read(\.persistentDomainNamesUnsorted).sorted().map(\.rawValue))])
        case .volatileDomains:
            return .answer([.stringArray(read(\.volatileDomainNamesUnsorted).sorted().map(\.rawValue))])
        case .administeredDomains:
            return .answer([.stringArray(read(\.administeredDomainNamesUnsorted).sorted().map(\.rawValue))])
        case .administratorDefaults:
            let domain = try arguments.domain(0)
            return .answer([PropertyListValue.dictionary(read { $0.administratorDefaults(domain: domain) }).dbusValue])
        case .forcedKeys:
            let domain = try arguments.domain(0)
            return .answer([.stringArray(read { $0.forcedKeys(domain: domain) })])
        case .isForced:
            let (domain, key) = (try arguments.domain(0), try arguments.key(1))
            return .answer([.boolean(read { $0.isForced(domain: domain, key: key) })])
        case .lookup:
            let (searchList, key) = (try arguments.domains(0), try arguments.key(1))
            guard let (domain, value) = read({ $0.lookup(searchList: searchList, key: key) }) else {
                throw .notFound("no domain of the search list has the key \"\(key)\"")
            }
            return .answer([.string(domain.rawValue), value.dbusVariant])
        case .write:
            let (domain, key, value) = (try arguments.domain(0), try arguments.key(1), try arguments.value(2))
            return try change { try $0.write(domain: domain, key: key, value: value) }
        case .remove:
            let (domain, key) = (try arguments.domain(0), try arguments.key(1))
            return try change { try $0.remove(domain: domain, key: key) }
        case .apply:
            let (domain, set, remove) = (try arguments.domain(0), try arguments.values(1), try arguments.keys(2))
            return try change { try $0.apply(domain: domain, set: set, remove: remove) }
        case .applyIf:
            let (domain, expected, absent) = (try arguments.domain(0), try arguments.values(1), try arguments.keys(2))
            let (set, remove) = (try arguments.values(3), try arguments.keys(4))
            return try change(answer: [.boolean(true)], otherwise: [.boolean(false)]) {
                try $0.applyIf(domain: domain, expected: expected, absent: absent, set: set, remove: remove)
            }
        case .replaceDomain:
            let (domain, values) = (try arguments.domain(0), try arguments.values(1))
            return try change { try $0.replaceDomain(domain, with: values) }
        case .removeDomain:
            let domain = try arguments.domain(0)
            return try change { try $0.removeDomain(domain) }
        case .setVolatileDomain:
            let (domain, values) = (try arguments.domain(0), try arguments.values(1))
            return try change { try $0.setVolatileDomain(domain, values: values) }
        case .removeVolatileDomain:
            let domain = try arguments.domain(0)
            return try change { $0.removeVolatileDomain(domain) }
        case .history:
            // A domain of "" asks for every domain's history (the host's callers only).
            let (domainText, keyText) = (try arguments.string(0), try arguments.string(1))
            let domain = domainText.isEmpty ? nil : try arguments.domain(0)
            let key = keyText.isEmpty ? nil : try arguments.key(1)
            let (after, limit) = (try arguments.uint64(2), try arguments.uint32(3))
            return .history(HistoryRequest(domain: domain, key: key, after: after, limit: limit), store())
        case .recentHistory:
            let (domainText, keyText) = (try arguments.string(0), try arguments.string(1))
            let domain = domainText.isEmpty ? nil : try arguments.domain(0)
            let key = keyText.isEmpty ? nil : try arguments.key(1)
            let request = HistoryRequest(domain: domain, key: key, after: 0, limit: try arguments.uint32(2), newest: true)
            return .history(request, store())
        case .revertTo:
            let (domain, sequence) = (try arguments.domain(0), try arguments.uint64(1))
            return .revert(RevertRequest(domain: domain, key: nil, sequence: sequence), store())
        case .revertKeyTo:
            let (domain, key, sequence) = (try arguments.domain(0), try arguments.key(1), try arguments.uint64(2))
            return .revert(RevertRequest(domain: domain, key: key, sequence: sequence), store())
        }
    }

    /// The store, once loaded.
    func store() -> DomainStore {
        guard let store = state.withLock({ $0.store }) else {
            preconditionFailure("calls are dispatched only once the store is loaded")
        }
        return store
    }

    /// Reads from the running state.
    func read<Result: Sendable>(_ body: (DomainState) -> Result) -> Result {
        state.withLock { state in
            guard let domains = state.domains else { preconditionFailure("calls are dispatched only once the store is loaded") }
            return body(domains)
        }
    }

    /// Changes the running state; the call is answered with `answer` once the change is
    /// carried out, or with `otherwise` when `body` declines to change anything (once the
    /// batches in flight are durable).
    ///
    /// `application` is the sandboxed application making the change (`nil` for the host):
    /// its share of the limits is checked besides the global ones.
    func change(
        as application: String?, answer: [DBusValue], otherwise: [DBusValue], _ body: (inout DomainState) throws -> Effect?
    ) throws(PreferencesServiceError) -> Outcome {
        try acting(as: application) { domains, store in
            guard let effect = try body(&domains) else {
                // Declined, perhaps because of a change still on its way to disk: answer
                // once what is in flight is durable, so a Read after the answer sees it
                // (else a read-modify-write would read the old value and lose again).
                let pending = domains.batchesInFlight > 0
                return pending ? .effect(.unchanged(afterPending: true), store, answer: otherwise) : .answer(otherwise)
            }
            return .effect(effect, store, answer: answer)
        }
    }

    /// Runs `body` on the running state and the store, with `application` (`nil` for the
    /// host) as the one acting, under the lock; an error that is not a refusal becomes
    /// `InvalidArgs`.
    func acting<Result: Sendable>(
        as application: String?, _ body: (inout DomainState, DomainStore) throws -> Result
    ) throws(PreferencesServiceError) -> Result {
        try waitUntilLoaded()
        do {
            return try state.withLock { state in
                guard state.domains != nil, let store = state.store else {
                    preconditionFailure("calls are dispatched only once the store is loaded")
                }
                if let application { state.domains!.followApplication(application) }
                state.domains!.actingApplication = application
                defer { state.domains!.actingApplication = nil }
                return try body(&state.domains!, store)
            }
        } catch let error as PreferencesServiceError {
            throw error
        } catch {
            throw .invalidArguments("\(error)")
        }
    }

    /// Completes a change the state accepted (commits it, emits its signal), then answers
    /// the call with `body`.
    func complete(_ effect: Effect, store: DomainStore, for call: DBusMessage, answer body: [DBusValue], who: String) {
        switch effect {
        case .unchanged(afterPending: false):
            reply(to: call, body)
        case .unchanged(afterPending: true):
            store.commit([]) { [self] result in
                answer(call, body, after: result)
            }
        case .volatile(let change):
            emit(change, volatile: true)
            reply(to: call, body)
        case .persistent(let batch):
            let early = EarlySignal()
            commit([batch], store: store, who: who, origin: .local, early: early) { [self] result in
                answer(call, body, after: result)
            }
            // While the store's writer commits (its sync is most of a write's time), this
            // thread encodes the `Changed` the commit will most likely emit, so the writer
            // only sends it. Used only if the commit's change is exactly the one predicted.
            early.prepare { [self] in
                guard let change = state.withLock({ $0.domains?.predictedChange(batch) }) else { return nil }
                return (change, try? connection.encode(changedSignal(change, volatile: false)))
            }
        }
    }

    func answer(_ call: DBusMessage, _ body: [DBusValue], after result: Result<Void, StoreError>) {
        switch result {
        case .success:
            reply(to: call, body)
        case .failure(let error):
            logger.error("store write failed", metadata: ["error": "\(error)"])
            let refusal = PreferencesServiceError.storageFailed("the change was not saved: \(error)")
            reply(to: call, error: refusal.busErrorName, refusal.description)
        }
    }

    // MARK: Sending

    /// Where a committed change came from. Every change reaches `Changed` (or
    /// `VolatileChanged`), the snapshots and the door's subscribers; the origin decides
    /// whether a persistent one also goes to dconf's file and `Notify`, and whether it
    /// roams as this machine's.
    enum ChangeOrigin: Sendable, Equatable {
        /// prefsd's own interface, undo and restore, the administrator's files: every reader.
        case local
        /// dconf's `Change`: its file is part of the commit and its front sends `Notify`.
        case dconf
        /// Another machine's change, applied from the roaming folder: not noted as this
        /// machine's (a pass that then read a later change of the key would take this one
        /// for this machine's and publish it over that later one).
        case roaming
    }

    /// The one path of a persistent change: commits `batches` (with `also`, mutations that
    /// change no value a reader sees, such as GVariant types) as one change by `who`, puts
    /// the outcome in force, tells every reader of each change that changed something
    /// (``emit(_:volatile:origin:encoded:)``, with `early`'s signal when it predicted it),
    /// and then runs `completion` with the outcome.
    func commit(
        _ batches: [Batch], also: [StoreMutation] = [], store: DomainStore, who: String, origin: ChangeOrigin,
        early: EarlySignal? = nil, recorded: (@Sendable ([UInt64]) -> Void)? = nil,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        store.commit(batches.flatMap(\.mutations) + also, who: who, recorded: recorded) { [self] result in
            let changes = state.withLock { state -> [Change] in
                switch result {
                case .success: return batches.compactMap { state.domains?.committed($0) }
                case .failure:
                    for batch in batches { state.domains?.failed(batch) }
                    return []
                }
            }
            for change in changes where !change.isEmpty {
                emit(change, volatile: false, origin: origin, encoded: early?.take(for: change))
            }
            completion(result)
        }
    }

    /// Tells the readers of `change`, committed (or, `volatile`, made in memory): `Changed`
    /// or `VolatileChanged`, its body bounded as the contract says (`encoded` is that signal
    /// encoded ahead, see ``EarlySignal``, if it was), the snapshots and the door's
    /// subscribers; for a persistent change, dconf's file and `Notify` and the roaming
    /// folder, as its `origin` says.
    func emit(_ change: Change, volatile: Bool, origin: ChangeOrigin = .local, encoded: EncodedMessage? = nil) {
        if !volatile, origin != .roaming { roaming.withLock { $0 }?.committed(change) }
        if !volatile, origin != .dconf, let dconf {
            dconf.enqueue(DconfFront.Job(touched: [change.domain: Array(change.changed.keys) + change.removed]))
        }
        emitSignal(encoded?.message ?? changedSignal(change, volatile: volatile), encoded: encoded)
    }

    /// The `Changed` (or `VolatileChanged`) signal of `change`.
    func changedSignal(_ change: Change, volatile: Bool) -> DBusMessage {
        let member = volatile ? PreferencesBus.volatileChangedSignal : PreferencesBus.changedSignal
        return .signal(path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: member, body: change.signalBody())
    }

    /// Answers `call` with `body`, or with `org.freedesktop.DBus.Error.LimitsExceeded` when
    /// the body would pass ``ServiceLimits/replyBytes`` or libdbus cannot send it: a caller
    /// is never left waiting for an answer that cannot come.
    func reply(to call: DBusMessage, _ body: [DBusValue]) {
        guard !call.noReplyExpected else { return }
        let size = DBusValue.structure(body).marshalledSize
        let limit = configuration.limits.replyBytes
        guard size <= limit else {
            logger.warning("a reply too large for the bus was refused", metadata: ["member": "\(call.member ?? "")", "bytes": "\(size)"])
            return reply(
                to: call, error: StandardErrorName.limitsExceeded,
                "the answer would take \(size) bytes, over the \(limit) a message may take on this bus (prefsd --max-reply-size); read it in parts (Read of single keys) or remove data"
            )
        }
        do {
            try connection(answering: call).send(call.makeReturn(body))
        } catch {
            logger.error("could not send a reply", metadata: ["member": "\(call.member ?? "")", "error": "\(error)"])
            reply(to: call, error: StandardErrorName.limitsExceeded, "the answer could not be sent on the bus: \(error)")
        }
    }

    /// Answers `call` with `body`, encoded already, as ``reply(to:_:)-([DBusValue])`` does.
    func reply(to call: DBusMessage, _ body: ReplyBody) {
        guard !call.noReplyExpected else { return }
        guard body.marshalledSize <= configuration.limits.replyBytes else { return reply(to: call, body.values) }
        do {
            try connection(answering: call).reply(to: call, with: body)
        } catch {
            // Reported, and answered otherwise, the way a reply built from values is.
            reply(to: call, body.values)
        }
    }

    func reply(to call: DBusMessage, error name: String, _ message: String) {
        guard !call.noReplyExpected else { return }
        send(call.makeError(name: name, message: message), over: connection(answering: call))
    }

    /// Sends a signal, unless it is too large for the bus (it is logged instead: sending
    /// it would get prefsd disconnected); `encoded`, when given, is `signal` encoded already.
    func emitSignal(_ signal: DBusMessage, encoded: EncodedMessage? = nil) {
        // The one place every change to what a domain reads becomes visible (its signal goes
        // out before its reply): the domain's snapshot goes stale here, first.
        if let snapshots, signal.member == PreferencesBus.changedSignal || signal.member == PreferencesBus.forcedKeysChangedSignal,
            case .string(let domain)? = signal.body.first
        {
            snapshots.invalidate(domain)
        }
        guard fitsOnBus(signal) else { return }
        if let encoded {
            do { try connection.send(encoded) } catch { send(signal) }
        } else {
            send(signal)
        }
        door?.forward(signal)
    }

    /// Whether `signal`'s body is within the bound on replies; a signal past it is logged,
    /// not sent (sending it would get prefsd disconnected).
    func fitsOnBus(_ signal: DBusMessage) -> Bool {
        let size = DBusValue.structure(signal.body).marshalledSize
        guard size <= configuration.limits.replyBytes else {
            logger.error("a signal too large for the bus was not sent", metadata: ["member": "\(signal.member ?? "")", "bytes": "\(size)"])
            return false
        }
        return true
    }

    func send(_ message: DBusMessage, over connection: (any ServiceConnection)? = nil) {
        do {
            try (connection ?? self.connection).send(message)
        } catch {
            logger.error("could not send a message", metadata: ["member": "\(message.member ?? message.errorName ?? "reply")", "error": "\(error)"])
        }
    }
}
