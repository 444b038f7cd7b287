import Dispatch
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesStore
import Synchronization

/// Whether the whole store is loaded: opened by the full load at start (or at once when the
/// service loads the store before serving), with the error that load ended with, if any.
final class LoadGate: Sendable {
    private let opened = Atomic<Bool>(false)
    private let succeeded = Atomic<Bool>(false)
    private let failure = Mutex<StoreError?>(nil)
    private let group = DispatchGroup()

    init() { group.enter() }

    /// Whether the whole store is loaded (or failed to load).
    var isOpen: Bool { opened.load(ordering: .acquiring) }

    /// Whether the whole store is loaded, without an error.
    var hasLoaded: Bool { succeeded.load(ordering: .acquiring) }

    /// Lets every waiter through, with the full load's error, if any. Called once.
    func open(failure error: StoreError?) {
        failure.withLock { $0 = error }
        succeeded.store(error == nil, ordering: .releasing)
        opened.store(true, ordering: .releasing)
        group.leave()
    }

    /// Blocks until the gate opens.
    /// - Throws: the error the full load ended with.
    func wait() throws(StoreError) {
        if !isOpen { group.wait() }
        if let error = failure.withLock({ $0 }) { throw error }
    }
}

/// Loading in two steps: the service answers reads as soon as its bus name is taken and
/// the store is open; a `Read`, `ReadDomain` or `Lookup` reads the domains it names from
/// disk (``DomainStore/loadDomain(_:)``) when the whole store is not loaded yet, while the
/// whole store loads on a queue of its own (``DomainStore/loadAll()``). Every other call is
/// held with the calls that arrived before the store was open (within the same bounds), and
/// a read that arrives after a held call is held too, so none overtakes an older one; every
/// change from elsewhere (managed domains, the administrator's settings, roaming) waits
/// too: quotas, the domain list and the signals of forced keys need every domain.
extension PreferencesService {
    /// Starts the full load of `store` on a queue of its own (once `hold`, when given, is
    /// signalled); once it is in the state, the gate opens and what waits for the whole store
    /// (the administration queue, roaming) starts.
    func loadRest(of store: DomainStore, after hold: DispatchSemaphore?) {
        Thread.detachNewThread { [self] in
            // Below the threads that answer calls, so reads of single domains go first (on
            // Linux, a nice value of the calling thread alone).
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            hold?.wait()
            do throws(StoreError) {
                let all = try store.loadAll()
                let leftOut = store.leftOutKeys
                state.withLock { $0.domains?.completeLoad(committed: all, leftOut: leftOut) }
                loaded.open(failure: nil)
                let answered = answerWaiting(readsOnly: false)
                logger.info("loaded", metadata: ["domains": "\(all.count)", "waitingCalls": "\(answered)"])
            } catch {
                logger.error("the store could not be read; calls are refused", metadata: ["error": "\(error)"])
                loaded.open(failure: error)
                _ = answerWaiting(readsOnly: false)
            }
            configuration.afterLoad?()
            administration.queue.resume()
            watcher.withLock { $0?.trigger() }
            startRoaming()
            administration.schedule { [self] in reloadAdministratorSettings() }
        }
    }

    /// Blocks until the whole store is loaded.
    /// - Throws: ``PreferencesServiceError/storageFailed(_:)`` when it could not be read.
    func waitUntilLoaded() throws(PreferencesServiceError) {
        do {
            try loaded.wait()
        } catch {
            throw .storageFailed("prefsd could not read its store: \(error)")
        }
    }

    /// Makes `domains` readable: each one not loaded yet is read from disk (outside the lock)
    /// and held; waits for the whole store instead when one cannot be read alone.
    func ensureLoaded(_ domains: [DomainName]) throws(PreferencesServiceError) {
        if loaded.isOpen { return try waitUntilLoaded() }
        let (store, missing) = state.withLock { state in
            (state.store, domains.filter { !(state.domains?.isLoaded($0) ?? true) })
        }
        guard let store, !missing.isEmpty else { return }
        for domain in Set(missing) {
            do {
                let (entries, leftOut) = try store.loadDomain(domain)
                state.withLock { $0.domains?.install(domain, entries: entries, leftOut: leftOut) }
            } catch {
                return try waitUntilLoaded()
            }
        }
    }

    /// Before `method` is performed: the domains a read names are loaded, and any other
    /// method waits for the whole store. Arguments that do not parse are left for the method
    /// to refuse.
    func prepare(_ method: PreferencesMethod, _ arguments: Arguments) throws(PreferencesServiceError) {
        if loaded.isOpen { return try waitUntilLoaded() }
        switch method {
        case .read, .readDomain:
            if let domain = try? arguments.domain(0) { try ensureLoaded([domain]) }
        case .lookup:
            if let domains = try? arguments.domains(0) { try ensureLoaded(domains) }
        default:
            try waitUntilLoaded()
        }
    }
}
