import Dispatch
import Foundation
import Logging
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// The administrator's defaults and dconf's system databases, followed live: every
/// directory they are read from is watched (``DirectoryWatcher``), and a change reloads
/// them all on one serial queue, the one managed domains reload on too, so that no two
/// reloads of what an administrator sets overlap.
final class AdministratorWatch: Sendable {
    /// The queue every reload of administrator settings (managed domains included) runs on.
    let queue = DispatchQueue(label: "prefsd.administrator")
    private struct State: Sendable {
        /// The watchers, by directory path.
        var watchers: [String: DirectoryWatcher] = [:]
        /// Whether a reload is scheduled and not started yet.
        var scheduled = false
        /// The plist defaults in force (kept for a file that cannot be read).
        var plistDefaults: [DomainName: [String: PropertyListValue]] = [:]
        /// Whether ``stop()`` was called: nothing is watched or reloaded any more.
        var stopped = false
        /// The reader, made on first use (it remembers the files it parsed).
        var loader: AdministratorDefaults?
    }
    private let state = Mutex(State())

    /// The reader of the administrator's files: `make`'s, made once.
    func loader(_ make: () -> AdministratorDefaults) -> AdministratorDefaults {
        state.withLock { state in
            if let loader = state.loader { return loader }
            let loader = make()
            state.loader = loader
            return loader
        }
    }

    /// Schedules `reload` on the queue, once for any number of calls before it starts.
    func schedule(_ reload: @escaping @Sendable () -> Void) {
        let first = state.withLock { state -> Bool in
            guard !state.scheduled, !state.stopped else { return false }
            state.scheduled = true
            return true
        }
        guard first else { return }
        queue.async { [self] in
            state.withLock { $0.scheduled = false }
            reload()
        }
    }

    /// Watches exactly `directories` (new ones started, gone ones cancelled), each change
    /// calling `changed`.
    func watch(_ directories: [URL], logger: Logger, changed: @escaping @Sendable () -> Void) {
        let wanted = Set(directories.map(\.path))
        let (cancelled, missing) = state.withLock { state -> ([DirectoryWatcher], [String]) in
            guard !state.stopped else { return ([], []) }
            let gone = state.watchers.filter { !wanted.contains($0.key) }
            for path in gone.keys { state.watchers[path] = nil }
            return (Array(gone.values), wanted.subtracting(state.watchers.keys).sorted())
        }
        for watcher in cancelled { watcher.cancel() }
        for path in missing {
            let watcher = DirectoryWatcher(directory: URL(fileURLWithPath: path, isDirectory: true), handler: changed)
            if case .polling(let reason) = watcher.mode {
                logger.debug("polling an administrator directory every second", metadata: ["directory": "\(path)", "reason": "\(reason)"])
            }
            let kept = state.withLock { state -> Bool in
                // Stopped, or another reload started a watcher for it meanwhile.
                guard !state.stopped, state.watchers[path] == nil else { return false }
                state.watchers[path] = watcher
                return true
            }
            if !kept { watcher.cancel() }
        }
    }

    /// The plist defaults in force.
    var plistDefaults: [DomainName: [String: PropertyListValue]] {
        get { state.withLock { $0.plistDefaults } }
        set { state.withLock { $0.plistDefaults = newValue } }
    }

    /// Stops watching.
    func stop() {
        let watchers = state.withLock { state -> [DirectoryWatcher] in
            state.stopped = true
            defer { state.watchers = [:] }
            return Array(state.watchers.values)
        }
        for watcher in watchers { watcher.cancel() }
    }
}

extension PreferencesService {
    /// The reader of the administrator's defaults and dconf's system databases.
    var administratorDefaults: AdministratorDefaults {
        administration.loader {
            AdministratorDefaults(sources: configuration.administratorSources, limits: configuration.limits, logger: logger)
        }
    }

    /// Reads the administrator's defaults and dconf's system databases for the first time
    /// and starts following them; returns what they set, to put in force with the store.
    func loadAdministratorSettings() -> AdministratorSettings {
        let loader = administratorDefaults
        // Watch before reading, so no change slips between the two.
        administration.watch(loader.watchedDirectories(profile: loader.readProfile()), logger: logger) { [self] in
            administration.schedule { [self] in reloadAdministratorSettings() }
        }
        let (settings, profile, plistDefaults) = loader.load(previousDefaults: [:])
        administration.plistDefaults = plistDefaults
        administration.watch(loader.watchedDirectories(profile: profile), logger: logger) { [self] in
            administration.schedule { [self] in reloadAdministratorSettings() }
        }
        if !settings.isEmpty || profile.path != nil {
            logger.info(
                "administrator settings",
                metadata: [
                    "defaultsDomains": "\(settings.defaults.count)", "lockedDomains": "\(settings.locks.count)",
                    "dconfProfile": "\(profile.path ?? "none")", "systemDatabases": "\(profile.systemDatabases)",
                ])
        }
        return settings
    }

    /// Reads them again and puts what changed in force, announcing it as a managed change
    /// is announced. Runs on ``AdministratorWatch/queue`` only.
    func reloadAdministratorSettings() {
        let loader = administratorDefaults
        let (settings, profile, plistDefaults) = loader.load(previousDefaults: administration.plistDefaults)
        administration.plistDefaults = plistDefaults
        // The profile may name other databases now.
        administration.watch(loader.watchedDirectories(profile: profile), logger: logger) { [self] in
            administration.schedule { [self] in reloadAdministratorSettings() }
        }
        let update = withDomains { $0.replaceAdministrator(with: settings) } ?? ForcedUpdate()
        let domains = Set(update.changes.map(\.domain)).union(update.forcedKeys.keys)
        if !domains.isEmpty {
            logger.info("administrator defaults or dconf locks changed", metadata: ["domains": "\(domains.map(\.rawValue).sorted())"])
        }
        announce(update)
    }
}
