import DBus
import Dconf
import Dispatch
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesStore
import Synchronization

/// The administrator's managed domains, followed live, and what a change of the
/// administrator's settings tells readers.
extension PreferencesService {
    /// Follows the managed directory: a file added, edited or removed takes effect at once
    /// and emits `Changed` for every value readers see change.
    func watchManagedDirectory() {
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
    func reloadManagedDomains() {
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
        for change in update.changes { emit(change, volatile: false, origin: .administrator) }
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
}
