import Dconf
import Dispatch
import Foundation
import GSettingsPaths
import PreferencesModel
import PreferencesStore
import Synchronization

/// The outcome of a commit waited for.
private final class CommitOutcome: Sendable {
    let result = Mutex<Result<Void, StoreError>?>(nil)
}

/// Taking in the database a dconf-service left: when prefsd starts serving dconf and finds
/// a database file it did not write (no prefsd mark), every value in it goes into the store,
/// with its GVariant type, as one change (who = `dconf-service`), before anything else is
/// written; the file itself is kept aside. Keys dconf-service's file lacks are left alone,
/// except those that were in the file prefsd handed back (`prefs dconf-switch-back` keeps a
/// copy): the user reset them under dconf-service, so they are removed here too.
extension PreferencesService {
    /// What taking in dconf's database came to.
    enum DconfTakeIn {
        /// Nothing to take in: no file, or prefsd's own mirror.
        case nothing
        /// Values were taken in (the store changed).
        case taken(keys: Int, removed: Int, keptAside: String)
        /// The file does not read as a dconf database (a power cut, a stray write): it was
        /// moved aside, as dconf-service moves a damaged database aside, and the file is
        /// made again from the store.
        case damaged(movedTo: String, reason: String)
        /// The file cannot be taken in; prefsd must not serve dconf, and leaves it alone.
        case refused(String)
    }

    /// Takes in dconf's database, if a dconf-service wrote it, given the store's `committed`
    /// domains.
    func takeInDconfDatabase(_ files: DconfFiles, store: DomainStore, committed: [DomainName: [String: PropertyListValue]]) -> DconfTakeIn {
        let bytes: [UInt8]
        do {
            guard let read = try files.readDatabase() else { return .nothing }
            bytes = read
        } catch {
            return .refused(error.description)
        }
        if DconfMirror.isMirror(bytes) { return .nothing }
        let time = Date().ISO8601Format().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        let values: [String: DconfValue]
        do {
            values = try DconfMirror.values(inFile: bytes)
        } catch {
            let aside = files.databasePath + ".damaged-" + time
            guard rename(files.databasePath, aside) == 0 else {
                return .refused("\(files.databasePath) is damaged (\(error)) and could not be moved aside: \(String(cString: strerror(errno)))")
            }
            return .damaged(movedTo: aside, reason: "\(error)")
        }
        // The keys the user reset under dconf-service: in the file handed back, gone now.
        var reset: [String] = []
        if let handedBack = try? DconfFiles.contents(of: files.handedBackPath), let before = try? DconfMirror.values(inFile: handedBack) {
            reset = before.keys.filter { values[$0] == nil }
        }
        var mutations: [StoreMutation] = []
        for (path, value) in values.sorted(by: { $0.key < $1.key }) {
            guard let location = GSettingsPath(settingsKey: path), let domain = try? DomainName(location.domain) else {
                return .refused("prefsd cannot store the dconf key \(path) (longer than \(PreferenceKey.maximumLength) bytes, or not in Unicode normal form C)")
            }
            let stored = value.storedValue
            do {
                try configuration.limits.check(stored, subject: "the value of \(path)")
            } catch {
                return .refused(error.description)
            }
            let type = value.type == DconfValue.naturalType(of: stored) ? nil : value.type
            if committed[domain]?[location.key] != stored { mutations.append(.set(domain, key: location.key, value: stored)) }
            mutations.append(.setGVariantType(domain, key: location.key, type: type))
        }
        for path in reset {
            guard let location = GSettingsPath(settingsKey: path), let domain = try? DomainName(location.domain) else { continue }
            mutations.append(.remove(domain, key: location.key))
            mutations.append(.setGVariantType(domain, key: location.key, type: nil))
        }
        let aside = files.takenInPath(at: time)
        do {
            // Kept aside first, durably: whatever happens next, the file is not lost.
            try DconfFiles.replace(aside, with: bytes, synced: true)
        } catch {
            return .refused("\(files.databasePath) could not be kept aside before taking it in: \(error)")
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = CommitOutcome()
        store.commit(mutations, who: "dconf-service") { result in
            outcome.result.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        if case .failure(let error)? = outcome.result.withLock({ $0 }) {
            return .refused("the values of \(files.databasePath) could not be stored: \(error)")
        }
        try? FileManager.default.removeItem(atPath: files.handedBackPath)
        return .taken(keys: values.count, removed: reset.count, keptAside: aside)
    }
}
