import Dconf
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesStore
import RegularFiles

/// Taking in the database a dconf-service left: when prefsd starts serving dconf and finds
/// a database file it did not write (no mark of this store's, see ``DconfMirror/Mark``),
/// every value dconf reads in it goes into the store, with its GVariant type, as one change
/// (who = `dconf-service`), before anything else is written; the file itself is kept aside.
/// The values pass the gate every change passes, key by key: a key the administrator
/// forces or locks, or one past a quota, is left out (named in the log) and the others are
/// taken in; the change is then committed and told to its readers as any other is.
/// Keys dconf-service's file lacks are left alone, except those that were in the copy this
/// store's prefsd handed back (`prefs dconf-switch-back` keeps one): the user reset them
/// under dconf-service, so they are removed here too.
///
/// The file is read as one someone else may have placed there: only a regular file (or a
/// link to one) of at most the store's size limit is opened, never waited on; anything else
/// is moved aside, as a damaged database is.
extension PreferencesService {
    /// What taking in dconf's database came to.
    enum DconfTakeIn {
        /// Nothing to take in: no file, or prefsd's own mirror.
        case nothing
        /// Values were taken in (the store changed); `leftOut` keys could not be.
        case taken(keys: Int, removed: Int, leftOut: Int, keptAside: String)
        /// The file does not read as a dconf database (a power cut, a stray write), or is not
        /// a regular file, or is larger than the store may hold: it was moved aside, as
        /// dconf-service moves a damaged database aside, and the file is made again from the
        /// store.
        case damaged(movedTo: String, reason: String)
        /// The file cannot be taken in; prefsd must not serve dconf, and leaves it alone.
        case refused(String)
    }

    /// Takes in dconf's database, if a dconf-service wrote it, into the running state (in
    /// force, not answering calls yet) and `store`.
    func takeInDconfDatabase(_ files: DconfFiles, store: DomainStore) -> DconfTakeIn {
        let path = files.databasePath
        let time = Date().ISO8601Format().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.contents(atPath: path, limit: configuration.limits.storeBytes, followingSymlinks: true)
        } catch {
            switch error {
            case .missing: return .nothing
            case .notRegular, .tooLarge: return moveAside(files, at: time, because: "\(error)")
            default: return .refused("\(path) cannot be read (\(error)); prefsd leaves it alone")
            }
        }
        let (mark, problem) = DconfStoreMark.load(storeDirectory: configuration.storeDirectory)
        if let problem {
            logger.warning("prefsd's mark in dconf's file names no store: the store's identity cannot be kept", metadata: ["error": "\(problem)"])
        }
        let read: (values: [String: DconfValue], unreadable: [String: String])
        do {
            read = try DconfMirror.readableValues(inFile: bytes)
        } catch {
            return moveAside(files, at: time, because: "\(error)")
        }
        // prefsd's own mirror (or one with the bare mark of prefsd 0.4 and earlier): the store
        // is the truth, and the file is made again from it.
        if let found = DconfMirror.Mark(inFile: bytes), found.store == nil || found == mark {
            keepUnlessMirrored(read, bytes: bytes, files: files, at: time, store: store, committed: self.read(\.committed))
            return .nothing
        }
        let reset = keysResetUnderDconfService(files, now: read.values, mark: mark)
        var leftOut = read.unreadable
        var changes: [TakenChange] = []
        for (path, value) in read.values.sorted(by: { $0.key < $1.key }) {
            guard let location = try? MappedKey.mapping(path) else {
                leftOut[path] =
                    "prefsd cannot store the key: it would be empty, longer than \(PreferenceKey.maximumLength) bytes or not in Unicode normal form C"
                continue
            }
            let stored = value.storedValue
            changes.append(
                TakenChange(
                    name: path, domain: location.domain, key: location.key, value: stored, type: DconfValue.typeToKeep(value.type, storing: stored)))
        }
        for path in reset ?? [] {
            guard let location = try? MappedKey.mapping(path) else { continue }
            changes.append(TakenChange(name: path, domain: location.domain, key: location.key, value: nil, type: nil))
        }
        let aside = files.takenInPath(at: time)
        do {
            // Kept aside first, durably: whatever happens next, the file is not lost.
            try DconfFiles.replace(aside, with: bytes, synced: true)
        } catch {
            return .refused("\(path) could not be kept aside before taking it in: \(error)")
        }
        let refused: [String: String]
        switch takeIn(changes, who: HistoryOrigin.dconfService, origin: .dconf, store: store) {
        case .success(let gateRefused): refused = gateRefused
        case .failure(let error): return .refused("the values of \(path) could not be stored: \(error)")
        }
        leftOut.merge(refused) { first, _ in first }
        if reset != nil { unlink(files.handedBackPath) }
        logLeftOut(
            leftOut, "keys of dconf's database left out of the take-in: prefsd cannot store them; the copy kept aside holds them", naming: "keys",
            metadata: ["file": "\(path)", "keptAside": "\(aside)"])
        let done = changes.filter { refused[$0.name] == nil }
        let keys = done.filter { $0.value != nil }.count
        return .taken(keys: keys, removed: done.count - keys, leftOut: leftOut.count, keptAside: aside)
    }

    /// Moves what is at dconf's database path aside (`user.damaged-TIME`), as dconf-service
    /// moves a damaged database aside; the file is then made again from the store.
    func moveAside(_ files: DconfFiles, at time: String, because reason: String) -> DconfTakeIn {
        let aside = files.databasePath + ".damaged-" + time
        guard rename(files.databasePath, aside) == 0 else {
            return .refused("\(files.databasePath) is no dconf database (\(reason)) and could not be moved aside: \(String(cString: strerror(errno)))")
        }
        return .damaged(movedTo: aside, reason: reason)
    }

    /// Keeps a copy of a file carrying prefsd's mark (`bytes`, whose values are `read`)
    /// when it holds a value the store does not (`user.replaced-TIME`): a mark can be copied
    /// into any file, and a crash can leave prefsd's own file behind the store, so before the
    /// file is made again from the store, nothing in it is lost unseen.
    func keepUnlessMirrored(
        _ read: (values: [String: DconfValue], unreadable: [String: String]), bytes: [UInt8], files: DconfFiles, at time: String,
        store: DomainStore, committed: [DomainName: [String: PropertyListValue]]
    ) {
        let types = (try? store.loadGVariantTypes()) ?? [:]
        let missing = read.values.filter { path, value in
            guard let location = try? MappedKey.mapping(path), let stored = committed[location.domain]?[location.key] else { return true }
            return DconfValue(storedValue: stored, writtenAs: types[location.domain]?[location.key]) != value
        }
        let differing = Array(missing.keys) + Array(read.unreadable.keys)
        guard !differing.isEmpty else { return }
        let copy = files.databasePath + ".replaced-" + time
        let named = differing.sorted().prefix(Self.namedLeftOutKeys).joined(separator: ", ")
        do {
            try DconfFiles.replace(copy, with: bytes, synced: true)
            logger.warning(
                "dconf's database carries prefsd's mark but holds values the store does not; it is kept aside, and made again from the store",
                metadata: ["file": "\(files.databasePath)", "keptAside": "\(copy)", "keys": "\(differing.count): \(named)"])
        } catch {
            logger.error(
                "dconf's database carries prefsd's mark but holds values the store does not, and could not be kept aside; it is made again from the store",
                metadata: ["file": "\(files.databasePath)", "error": "\(error)", "keys": "\(differing.count): \(named)"])
        }
    }

    /// The dconf keys the user reset under dconf-service: those of the copy this store's
    /// prefsd handed back that dconf's file (`now`) no longer has; `nil` when there is no
    /// such copy. Only a copy prefsd handed back for this store counts (a regular file, not
    /// a link, of this user's, carrying the store's `mark`): another is named in the log and
    /// left alone, and decides nothing.
    func keysResetUnderDconfService(_ files: DconfFiles, now values: [String: DconfValue], mark: DconfMirror.Mark) -> [String]? {
        let path = files.handedBackPath
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.contents(atPath: path, limit: configuration.limits.storeBytes, followingSymlinks: false, owner: getuid())
        } catch .missing {
            return nil
        } catch {
            logger.warning("not a copy prefsd handed back: the take-in removes no key for it", metadata: ["file": "\(path)", "error": "\(error)"])
            return nil
        }
        guard mark.store != nil, DconfMirror.Mark(inFile: bytes) == mark, let before = try? DconfMirror.readableValues(inFile: bytes) else {
            logger.warning(
                "not a copy prefsd handed back: the take-in removes no key for it",
                metadata: ["file": "\(path)", "error": "it does not carry the mark of this store's prefsd"])
            return nil
        }
        return before.values.keys.filter { values[$0] == nil }.sorted()
    }
}
