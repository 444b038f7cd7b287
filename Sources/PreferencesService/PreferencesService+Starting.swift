import DBus
import Dconf
import Dispatch
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesStore
import Synchronization

/// Starting to serve: the store loaded (whole, or beside the calls), what the administrator
/// forces and sets put in force, and the calls that waited answered in order.
extension PreferencesService {
    /// Starts answering, the waiting calls first. With dconf's or xfconf's protocol the whole
    /// store is loaded first (dconf's file is made from every value, the user's channel files
    /// are taken in); without them, the store loads beside the calls, and a read of a domain
    /// not loaded yet reads that domain alone (see `PreferencesService+Loading.swift`).
    /// - Throws: `StoreError` when the store cannot be read.
    public func start(store: DomainStore) throws(StoreError) {
        try start(store: store, holdingFullLoadUntil: nil)
    }

    /// ``start(store:)``, whose full load (without dconf's protocol) waits for `hold` first:
    /// what tests use to see the service while domains load one by one.
    func start(store: DomainStore, holdingFullLoadUntil hold: DispatchSemaphore?) throws(StoreError) {
        // Watch before reading, so no change to the managed directory slips between the two.
        watchManagedDirectory()
        var domains: DomainState
        // With dconf's or xfconf's protocol the whole store is loaded first: their files are
        // made from every value of theirs.
        if dconf == nil && xfconf == nil {
            // Nothing reloads the administrator's settings until every domain is loaded: the
            // signals of a reload compare values of every domain it touches.
            administration.queue.suspend()
            domains = DomainState.loading(limits: configuration.limits)
        } else {
            domains = DomainState(committed: try store.loadAll(), limits: configuration.limits)
            domains.leftOut = store.leftOutKeys
        }
        _ = domains.replaceForced(with: managed.load(previous: [:]))
        _ = domains.replaceAdministrator(with: loadAdministratorSettings())
        let whole = domains.isComplete
        if whole { loaded.open(failure: nil) }
        state.withLock { state in
            state.domains = domains
            state.store = store
            state.readsServed = !whole
        }
        // dconf's database taken in (through the gate, like any change) and dconf's file made
        // from the store, before any call is answered.
        if dconf != nil { try startDconf(store: store) }
        // The user's channel files taken in likewise.
        if xfconf != nil { takeInXfconfChannels(store: store) }
        serve(whole: whole, store: store, hold: hold)
    }

    /// With dconf's protocol: takes in a database a dconf-service wrote, before anything else
    /// is written, then makes dconf's file from the store.
    func startDconf(store: DomainStore) throws(StoreError) {
        guard let dconf else { return }
        switch takeInDconfDatabase(dconf.files, store: store) {
        case .nothing:
            break
        case .taken(let keys, let removed, let leftOut, let aside):
            logger.notice(
                "took in dconf's database",
                metadata: [
                    "file": "\(dconf.files.databasePath)", "keys": "\(keys)", "removed": "\(removed)", "leftOut": "\(leftOut)",
                    "keptAside": "\(aside)",
                ])
        case .damaged(let aside, let reason):
            logger.error(
                "what lies at dconf's database path is not a database prefsd can read (damaged, or not a regular file, or too large) and was moved aside; dconf's file is made again from the store",
                metadata: ["file": "\(dconf.files.databasePath)", "movedTo": "\(aside)", "error": "\(reason)"])
        case .refused(let reason):
            logger.error("prefsd does not serve dconf: \(reason)")
            dconf.refuse(reason)
        }
        guard !dconf.isRefused else { return }
        dconf.start(domains: read(\.committed), types: try store.loadGVariantTypes(), service: self)
    }

    /// Answers the calls, the waiting ones first, once the running state is in force (the
    /// whole store, or, not `whole`, a state that loads it beside the calls).
    func serve(whole: Bool, store: DomainStore, hold: DispatchSemaphore?) {
        let count = whole ? read(\.committed.count) : 0
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
}
