import Glibc
import RegularFiles

/// Where a dconf database lives and how its readers are told it changed: the database file
/// `$XDG_CONFIG_HOME/dconf/NAME` that dconf's clients map, and the invalidation file
/// `$XDG_RUNTIME_DIR/dconf/NAME` whose first byte they watch.
public struct DconfFiles: Sendable, Hashable {
    /// The database's name (`user`).
    public let name: String
    /// The directory of database files (`$XDG_CONFIG_HOME/dconf`).
    public let databaseDirectory: String
    /// The directory of invalidation files (`$XDG_RUNTIME_DIR/dconf`).
    public let runtimeDirectory: String

    /// The files of the database `name` in these directories.
    public init(name: String, databaseDirectory: String, runtimeDirectory: String) {
        self.name = name
        self.databaseDirectory = databaseDirectory
        self.runtimeDirectory = runtimeDirectory
    }

    /// The files of database `name` where dconf puts them for `environment` (its
    /// `XDG_CONFIG_HOME`, else `HOME/.config`; its `XDG_RUNTIME_DIR`, else `/run/user/UID`).
    public init(name: String, environment: [String: String]) {
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((environment["HOME"] ?? "") + "/.config")
        let runtime = environment["XDG_RUNTIME_DIR"].flatMap { $0.isEmpty ? nil : $0 } ?? "/run/user/\(getuid())"
        self.init(name: name, databaseDirectory: config + "/dconf", runtimeDirectory: runtime + "/dconf")
    }

    /// The database file's path.
    public var databasePath: String { databaseDirectory + "/" + name }

    /// Where the database a dconf-service wrote is kept once prefsd has taken it in (one
    /// copy per take-in, named by the time: `user.taken-in-20261128T104512Z`).
    public func takenInPath(at time: String) -> String { databasePath + ".taken-in-" + time }

    /// Where `prefs dconf-switch-back` keeps the database as prefsd handed it back: what a
    /// later take-in compares dconf's file with, to tell the keys reset under dconf-service.
    public var handedBackPath: String { databasePath + ".prefsd-handed-back" }

    /// The invalidation file's path.
    public var invalidationPath: String { runtimeDirectory + "/" + name }

    /// The most bytes of a dconf database read unless a caller says otherwise: 512 MiB,
    /// the default bound of prefsd's whole store (`prefsd --max-store-size`).
    public static let maximumDatabaseBytes = 512 << 20

    /// The database file's bytes (at most `limit`); `nil` when there is none.
    /// - Throws: ``DconfError`` naming the file when it cannot be read, is not a regular
    ///   file (or a link to one), or is larger than `limit`.
    public func readDatabase(limit: Int = maximumDatabaseBytes) throws(DconfError) -> [UInt8]? {
        try Self.contents(of: databasePath, limit: limit)
    }

    /// The bytes of the regular file at `path` (a symbolic link is followed unless
    /// `followingSymlinks` is off), at most `limit` of them; `nil` when there is none. A
    /// FIFO, device, socket or directory there is never opened (see `RegularFile`).
    /// - Throws: ``DconfError`` naming the file when it cannot be read, is not a regular
    ///   file, or is larger than `limit`.
    public static func contents(of path: String, limit: Int = maximumDatabaseBytes, followingSymlinks: Bool = true) throws(DconfError) -> [UInt8]? {
        do {
            return try RegularFile.contents(atPath: path, limit: limit, followingSymlinks: followingSymlinks)
        } catch .missing {
            return nil
        } catch {
            throw DconfError("cannot read \(path): \(error)")
        }
    }
}
