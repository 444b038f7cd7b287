import Foundation
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesStore
import RegularFiles

#if canImport(Glibc)
    import Glibc
#endif

/// The administrator's managed domains: `<directory>/<domain>.plist`, XML or binary
/// property lists whose keys are forced on the user.
struct ManagedDomains {
    let directory: URL
    /// Whether the directory must be owned by root and writable by no one else. Only tests
    /// turn this off: otherwise a user could force keys to fool an application about what
    /// an administrator manages.
    let requireRootOwnership: Bool
    /// The limits every managed value obeys, as values written on the bus do.
    let limits: ServiceLimits
    let logger: Logger
    /// What the directory holds, as the log names it (the administrator's defaults are
    /// read the same way).
    var kind = "managed preferences"

    /// Reads every managed domain. A file that cannot be read or parsed is logged with its
    /// path and keeps the state it had in `previous`, so one bad edit never unforces a
    /// whole domain; a removed file removes its domain.
    func load(previous: [DomainName: [String: PropertyListValue]]) -> [DomainName: [String: PropertyListValue]] {
        var info = stat()
        guard stat(directory.path, &info) == 0 else {
            logger.debug("no \(kind)", metadata: ["directory": "\(directory.path)"])
            return [:]
        }
        guard (info.st_mode & S_IFMT) == S_IFDIR else {
            logger.warning("the \(kind) path is not a directory; ignoring it", metadata: ["path": "\(directory.path)"])
            return [:]
        }
        if requireRootOwnership, info.st_uid != 0 || (info.st_mode & (S_IWGRP | S_IWOTH)) != 0 {
            logger.warning(
                "the \(kind) directory must be owned by root and not writable by others; ignoring it",
                metadata: ["directory": "\(directory.path)", "owner": "\(info.st_uid)", "mode": "\(String(info.st_mode & 0o7777, radix: 8))"])
            return [:]
        }
        let names: [String]
        do {
            names = try FileManager.default.contentsOfDirectory(atPath: directory.path)
        } catch {
            logger.error("cannot list the \(kind) directory", metadata: ["directory": "\(directory.path)", "error": "\(error)"])
            return previous
        }
        var domains: [DomainName: [String: PropertyListValue]] = [:]
        for name in names.sorted() where name.hasSuffix(".plist") {
            let path = directory.appendingPathComponent(name).path
            guard let domain = try? DomainName(String(name.dropLast(".plist".count))) else {
                logger.warning("ignoring a file of \(kind) whose name is not a domain name", metadata: ["path": "\(path)"])
                continue
            }
            do {
                domains[domain] = try read(path, domain: domain)
            } catch {
                logger.error(
                    "ignoring a file of \(kind) that cannot be used; its previous state stays in force",
                    metadata: ["path": "\(path)", "error": "\(error)"])
                if let kept = previous[domain] { domains[domain] = kept }
            }
        }
        return domains
    }

    /// Reads one managed file: a regular file of at most ``ServiceLimits/managedFileBytes``
    /// holding a dictionary whose keys and values obey the store's rules and the limits of
    /// values on the bus.
    private func read(_ path: String, domain: DomainName) throws -> [String: PropertyListValue] {
        let data = try ManagedFile.contents(of: path, limit: limits.managedFileBytes)
        guard case .dictionary(let entries) = try PropertyListValue(propertyListData: data) else {
            throw PreferencesModelError.invalidValue(reason: "the top level is not a dictionary")
        }
        if entries.count > limits.keysPerDomain {
            throw PreferencesServiceError.quotaExceeded(
                "it forces \(entries.count) keys, over the limit of \(limits.keysPerDomain) keys in one domain (prefsd --max-keys-per-domain)")
        }
        var bytes = ServiceLimits.domainOverhead
        for (key, value) in entries.sorted(by: { $0.key < $1.key }) {
            if let problem = PreferenceKey.storedKeyProblem(key) { throw PreferencesModelError.invalidKey(key, reason: problem) }
            try limits.check(value, subject: "the value of \"\(key)\"")
            bytes += DomainState.entryBytes(domain: domain, key: key, value: value)
        }
        if bytes > limits.domainBytes {
            throw PreferencesServiceError.quotaExceeded(
                "its values take \(bytes) bytes, over the limit of \(limits.domainBytes) for one domain (prefsd --max-domain-size)")
        }
        return entries
    }
}

/// Reading a managed file without trusting what is at its path.
enum ManagedFile {
    /// Why a managed file cannot be read.
    struct Refusal: Error, CustomStringConvertible {
        let description: String
    }

    /// The bytes of the regular file at `path`, refusing anything else (a directory, a
    /// FIFO that would block, a device) and any file over `limit` bytes.
    static func contents(of path: String, limit: Int) throws(Refusal) -> Data {
        do {
            return Data(try RegularFile.contents(atPath: path, limit: limit, followingSymlinks: true))
        } catch .notRegular(let kind) {
            throw Refusal(description: "it is not a regular file but \(kind); a managed domain must be a plain .plist file")
        } catch .tooLarge(let size, _) {
            throw Refusal(description: "it is \(size) bytes or more, over the limit of \(limit) for a managed file (prefsd --max-managed-file-size)")
        } catch {
            throw Refusal(description: "\(error)")
        }
    }
}

/// What putting a new set of forced keys in force changed.
struct ForcedUpdate: Sendable {
    /// Per domain, how the values readers see changed.
    var changes: [Change] = []
    /// The domains whose set of forced keys changed, with their keys now (sorted).
    var forcedKeys: [DomainName: [String]] = [:]
    /// Per domain, the journal's notes of the change (who = `managed`): each key readers
    /// see change, with its value before.
    var notes: [DomainName: [StoreMutation]] = [:]
}

extension DomainState {
    /// Puts a new set of forced keys in force and says what changed.
    mutating func replaceForced(with newForced: [DomainName: [String: PropertyListValue]]) -> ForcedUpdate {
        var affected = forced.mapValues { Set($0.keys) }
        for (domain, keys) in newForced { affected[domain, default: []].formUnion(keys.keys) }
        return replacingLayers(affecting: affected) { $0.forced = newForced.filter { !$0.value.isEmpty } }
    }
}
