import Dconf
import Foundation
import Logging
import PreferencesModel
import PreferencesProtocol
import RegularFiles
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Where the administrator's defaults and dconf's system databases are read from.
struct AdministratorSources: Sendable {
    /// `<domain>.plist` files of defaults (`/etc/prefsd/defaults`).
    var defaultsDirectory: URL
    /// The dconf profile file; `nil`: found as dconf finds it (see ``DconfProfile``).
    var dconfProfile: String?
    /// The directory of dconf's system databases (`/etc/dconf/db`): `NAME.d/` for each.
    var dconfDatabaseDirectory: URL
    /// Whether the defaults and database directories are used only when owned by root and
    /// writable by no one else (as the managed directory).
    var requireRootOwnership: Bool
    /// The environment dconf's profile is looked up with.
    var environment: [String: String]
    /// The administrator's xfconf channel folders, the most important first (none without
    /// `prefsd --xfconf`).
    var xfconfDirectories: [String] = []
}

/// Reads the administrator's defaults and dconf's system databases into
/// ``AdministratorSettings``, remembering each file it parsed (by its identity, size and
/// times) so that a reload parses only what changed, and reports each problem once per
/// version of a file.
final class AdministratorDefaults: Sendable {
    /// One file as last parsed.
    private struct Parsed: Sendable {
        var fingerprint: [Int]
        var values: [MappedKey: PropertyListValue] = [:]
        var locks: Set<MappedKey> = []
    }

    let sources: AdministratorSources
    let limits: ServiceLimits
    let logger: Logger
    private let cache = Mutex<[String: Parsed]>([:])
    /// The profile last read, by path and fingerprint, so that its problems are logged once.
    private let lastProfile = Mutex<(path: String, fingerprint: [Int], profile: DconfProfile)?>(nil)

    /// A reader of `sources`, holding every value to `limits`, reporting to `logger`.
    init(sources: AdministratorSources, limits: ServiceLimits, logger: Logger) {
        self.sources = sources
        self.limits = limits
        self.logger = logger
    }

    /// The directories whose changes change what ``load(previousDefaults:)`` reads: the
    /// defaults directory, the profile's directory, and each system database's `NAME.d`
    /// and `NAME.d/locks`.
    func watchedDirectories(profile: DconfProfile) -> [URL] {
        var directories = [sources.defaultsDirectory]
        let profilePath = profile.path ?? "/etc/dconf/profile/user"
        directories.append(URL(fileURLWithPath: profilePath).deletingLastPathComponent())
        for name in profile.systemDatabases {
            let database = sources.dconfDatabaseDirectory.appendingPathComponent(name + ".d", isDirectory: true)
            directories.append(database)
            directories.append(database.appendingPathComponent("locks", isDirectory: true))
        }
        directories += sources.xfconfDirectories.map { URL(fileURLWithPath: $0, isDirectory: true) }
        var seen: Set<String> = []
        return directories.filter { seen.insert($0.standardizedFileURL.path).inserted }
    }

    /// Reads everything: the profile, the databases it names, the defaults directory.
    /// `previousDefaults` are the plist defaults in force, kept for a file that cannot be
    /// read (as for managed files).
    func load(previousDefaults: [DomainName: [String: PropertyListValue]]) -> (
        settings: AdministratorSettings, profile: DconfProfile, plistDefaults: [DomainName: [String: PropertyListValue]]
    ) {
        let plistDefaults = ManagedDomains(
            directory: sources.defaultsDirectory, requireRootOwnership: sources.requireRootOwnership,
            limits: limits, logger: logger, kind: "administrator defaults"
        ).load(previous: previousDefaults)
        let profile = readProfile()
        var databases: [(values: [MappedKey: PropertyListValue], locks: Set<MappedKey>)] = []
        var used: Set<String> = []
        if !profile.systemDatabases.isEmpty, trusted(sources.dconfDatabaseDirectory) {
            for name in profile.systemDatabases {
                databases.append(readDatabase(name, used: &used))
            }
        }
        cache.withLock { cache in cache = cache.filter { used.contains($0.key) } }
        var settings = layer(databases, under: plistDefaults)
        if !sources.xfconfDirectories.isEmpty {
            let user = XfconfChannelsReader.currentUser()
            let channels = XfconfChannelsReader.read(
                directories: sources.xfconfDirectories, user: user.name, groups: user.groups, limit: limits.managedFileBytes, logger: logger)
            settings.addXfconfChannels(channels)
        }
        return (settings, profile, plistDefaults)
    }

    /// The settings of the databases (in profile order) and the plist defaults, as dconf
    /// layers databases: a key locked in several databases takes its value from the last
    /// of them that locks it, or a database after that one; otherwise the first database
    /// that sets a key gives its default, and a plist default goes before them all.
    private func layer(
        _ databases: [(values: [MappedKey: PropertyListValue], locks: Set<MappedKey>)],
        under plistDefaults: [DomainName: [String: PropertyListValue]]
    ) -> AdministratorSettings {
        var settings = AdministratorSettings()
        var lockLevel: [MappedKey: Int] = [:]
        for (level, database) in databases.enumerated() {
            for key in database.locks { lockLevel[key] = level }
        }
        for (key, level) in lockLevel {
            let value = databases[level...].lazy.compactMap { $0.values[key] }.first
            settings.locks[key.domain, default: [:]][key.key] = AdministratorSettings.Lock(value: value)
        }
        for database in databases.reversed() {
            for (key, value) in database.values where lockLevel[key] == nil {
                settings.defaults[key.domain, default: [:]][key.key] = value
            }
        }
        for (domain, values) in plistDefaults {
            settings.defaults[domain, default: [:]].merge(values) { _, plist in plist }
        }
        for (domain, values) in settings.defaults {
            var bytes = ServiceLimits.domainOverhead
            for (key, value) in values { bytes += DomainState.entryBytes(domain: domain, key: key, value: value) }
            if values.count > limits.keysPerDomain || bytes > limits.domainBytes {
                logger.error(
                    "ignoring the administrator's defaults of a domain past the limits of one domain (prefsd --max-keys-per-domain, --max-domain-size)",
                    metadata: ["domain": "\(domain)", "keys": "\(values.count)", "bytes": "\(bytes)"])
                settings.defaults[domain] = nil
            }
        }
        return settings
    }

    /// The profile in force, its problems logged with file and line.
    func readProfile() -> DconfProfile {
        guard let path = DconfProfile.locate(explicit: sources.dconfProfile, environment: sources.environment) else {
            return DconfProfile()
        }
        let fingerprint = Self.fingerprint(path)
        if let last = lastProfile.withLock({ $0 }), last.path == path, last.fingerprint == fingerprint, !fingerprint.isEmpty {
            return last.profile
        }
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.contents(atPath: path, limit: limits.managedFileBytes, followingSymlinks: true)
        } catch .missing {
            logger.debug("no dconf profile", metadata: ["path": "\(path)"])
            return DconfProfile(path: path)
        } catch {
            // A profile that cannot be read keeps the databases it named (a failed read
            // never lifts a lock); none when it was never read.
            let kept = lastProfile.withLock { $0?.path == path ? $0?.profile : nil }
            logger.warning(
                "\(path): the dconf profile cannot be read (\(error)); \(kept == nil ? "no dconf system database applies" : "the databases it named before stay in force")"
            )
            return kept ?? DconfProfile(path: path)
        }
        let profile = DconfProfile.parse(String(decoding: bytes, as: UTF8.self), path: path) { line, message in
            logger.warning("\(path):\(line): \(message)")
        }
        lastProfile.withLock { $0 = (path, fingerprint, profile) }
        return profile
    }

    /// One system database: its keyfiles (later names win) and its locks.
    private func readDatabase(_ name: String, used: inout Set<String>) -> (values: [MappedKey: PropertyListValue], locks: Set<MappedKey>) {
        let database = DconfSystemDatabase(name: name, in: sources.dconfDatabaseDirectory)
        var values: [MappedKey: PropertyListValue] = [:]
        var locks: Set<MappedKey> = []
        for path in database.keyfiles {
            used.insert(path)
            values.merge(parse(path, locks: false).values) { _, later in later }
        }
        for path in database.lockFiles {
            used.insert(path)
            locks.formUnion(parse(path, locks: true).locks)
        }
        return (values, locks)
    }

    /// A keyfile or locks file, parsed again only when it changed; problems are logged as
    /// `file:line: message` when it is parsed. A file that cannot be read keeps what it
    /// held before (one failed read never lifts a lock).
    private func parse(_ path: String, locks: Bool) -> Parsed {
        let fingerprint = Self.fingerprint(path)
        if let cached = cache.withLock({ $0[path] }), cached.fingerprint == fingerprint { return cached }
        let bytes: [UInt8]
        do {
            bytes = try RegularFile.contents(atPath: path, limit: limits.managedFileBytes, followingSymlinks: true)
        } catch {
            logger.error(
                "\(path): cannot be read, so what it held before stays in force: \(error) (prefsd --max-managed-file-size bounds every administrator file)")
            return cache.withLock { $0[path] } ?? Parsed(fingerprint: [])
        }
        var parsed = Parsed(fingerprint: fingerprint)
        let problems: [FileProblem]
        if locks {
            (parsed.locks, problems) = DconfLocksReader.read(bytes)
        } else {
            let limits = limits
            (parsed.values, problems) = DconfKeyfileReader.read(bytes) { value, subject in try limits.check(value, subject: subject) }
        }
        for problem in problems {
            logger.warning("\(path):\(problem.line): \(problem.message); the rest of the file applies")
        }
        cache.withLock { $0[path] = parsed }
        return parsed
    }

    /// Whether a directory of the administrator's may be used: owned by root and writable
    /// by no one else, unless tests turned the check off.
    private func trusted(_ directory: URL) -> Bool {
        guard sources.requireRootOwnership else { return true }
        var info = stat()
        guard stat(directory.path, &info) == 0 else { return false }
        if info.st_uid != 0 || (info.st_mode & (S_IWGRP | S_IWOTH)) != 0 {
            logger.warning(
                "the dconf database directory must be owned by root and not writable by others; ignoring it",
                metadata: ["directory": "\(directory.path)", "owner": "\(info.st_uid)", "mode": "\(String(info.st_mode & 0o7777, radix: 8))"])
            return false
        }
        return true
    }

    /// What changes when a file is edited or replaced: device, inode, size, times.
    private static func fingerprint(_ path: String) -> [Int] {
        var info = stat()
        guard stat(path, &info) == 0 else { return [] }
        return [
            Int(info.st_dev), Int(info.st_ino), Int(info.st_size), info.st_mtim.tv_sec, info.st_mtim.tv_nsec,
            info.st_ctim.tv_sec, info.st_ctim.tv_nsec,
        ]
    }
}
