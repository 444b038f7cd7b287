import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// The files of a store on disk: its private directory, the database and its WAL companions.
struct StoreFiles: Sendable {
    /// The name of the database file inside the store directory.
    static let databaseName = "store.sqlite"
    /// The suffixes of the files SQLite keeps beside the database in WAL mode.
    static let companionSuffixes = ["-wal", "-shm"]

    let directory: URL
    let database: URL

    init(directory: URL) {
        self.directory = directory
        database = directory.appendingPathComponent(Self.databaseName, isDirectory: false)
    }

    var directoryPath: String { directory.path }
    var databasePath: String { database.path }

    /// Creates the directory (mode 0700) or tightens an existing one to 0700.
    func prepareDirectory() throws(StoreError) {
        do {
            try FileManager.default.createDirectory(
                at: directory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .cannotOpen(path: databasePath, reason: "cannot create the directory \(directoryPath): \(error.localizedDescription)")
        }
        var status = stat()
        guard stat(directoryPath, &status) == 0 else {
            throw .cannotOpen(path: databasePath, reason: "cannot inspect \(directoryPath): \(Self.errnoText())")
        }
        guard status.st_mode & S_IFMT == S_IFDIR else {
            throw .cannotOpen(path: databasePath, reason: "\(directoryPath) is not a directory")
        }
        if status.st_mode & 0o7777 != 0o700, chmod(directoryPath, 0o700) != 0 {
            throw .cannotOpen(path: databasePath, reason: "cannot restrict \(directoryPath) to mode 0700: \(Self.errnoText())")
        }
    }

    /// Creates an empty database file with mode 0600 when there is none, so that SQLite
    /// (which gives its -wal and -shm files the database's mode) never makes a readable one.
    func createDatabaseFileIfNeeded() throws(StoreError) {
        let descriptor = open(databasePath, O_WRONLY | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .cannotOpen(path: databasePath, reason: "cannot create the file: \(Self.errnoText())")
        }
        close(descriptor)
    }

    /// Restricts the database and its companions to mode 0600.
    func restrictFileModes() throws(StoreError) {
        for path in [databasePath] + Self.companionSuffixes.map({ databasePath + $0 }) {
            var status = stat()
            guard stat(path, &status) == 0 else { continue }
            if status.st_mode & 0o7777 != 0o600, chmod(path, 0o600) != 0 {
                throw .cannotOpen(path: databasePath, reason: "cannot restrict \(path) to mode 0600: \(Self.errnoText())")
            }
        }
    }

    /// Moves the database and its companions aside to `store.sqlite.corrupt-<UTC time>`
    /// (with `-wal` / `-shm` appended for the companions), never deleting anything.
    /// - Returns: where the database went.
    func moveAside(now: Date = Date()) throws(StoreError) -> URL {
        let target = asideTarget(now: now)
        for suffix in [""] + Self.companionSuffixes {
            let source = databasePath + suffix
            guard access(source, F_OK) == 0 else { continue }
            if rename(source, target.path + suffix) != 0 {
                throw .cannotOpen(
                    path: databasePath,
                    reason: "it is damaged and cannot be moved aside to \(target.path + suffix): \(Self.errnoText())")
            }
        }
        return target
    }

    /// Copies the database and its WAL, as they are on disk, to `store.sqlite.corrupt-<UTC
    /// time>` (and `-wal`), mode 0600, for a store that stays in use; the caller makes sure
    /// nothing writes meanwhile. (The `-shm` index is not copied: SQLite rebuilds it from the
    /// WAL.)
    /// - Returns: where the copy of the database is.
    func copyAside(now: Date = Date()) throws(StoreError) -> URL {
        let target = asideTarget(now: now)
        for suffix in ["", "-wal"] where access(databasePath + suffix, F_OK) == 0 {
            do {
                try FileManager.default.copyItem(atPath: databasePath + suffix, toPath: target.path + suffix)
            } catch {
                throw .writeFailed(reason: "cannot copy \(databasePath + suffix) to \(target.path + suffix): \(error.localizedDescription)")
            }
            guard chmod(target.path + suffix, 0o600) == 0 else {
                throw .writeFailed(reason: "cannot restrict \(target.path + suffix) to mode 0600: \(Self.errnoText())")
            }
        }
        return target
    }

    /// `store.sqlite.corrupt-<UTC time>`, with `-1`, `-2`, … appended while a file of that
    /// name (or a companion) exists.
    private func asideTarget(now: Date) -> URL {
        let stamp = Self.timestamp(now)
        var target = directory.appendingPathComponent("\(Self.databaseName).corrupt-\(stamp)")
        var attempt = 1
        while Self.anyExists(target.path) {
            target = directory.appendingPathComponent("\(Self.databaseName).corrupt-\(stamp)-\(attempt)")
            attempt += 1
        }
        return target
    }

    private static func anyExists(_ path: String) -> Bool {
        ([""] + companionSuffixes).contains { access(path + $0, F_OK) == 0 }
    }

    /// `yyyyMMdd'T'HHmmss'Z'` in UTC.
    static func timestamp(_ date: Date) -> String {
        var seconds = time_t(date.timeIntervalSince1970.rounded(.down))
        var parts = tm()
        gmtime_r(&seconds, &parts)
        func two(_ number: Int32) -> String { number < 10 ? "0\(number)" : "\(number)" }
        return "\(parts.tm_year + 1900)\(two(parts.tm_mon + 1))\(two(parts.tm_mday))T"
            + "\(two(parts.tm_hour))\(two(parts.tm_min))\(two(parts.tm_sec))Z"
    }

    static func errnoText() -> String {
        String(cString: strerror(errno))
    }
}
