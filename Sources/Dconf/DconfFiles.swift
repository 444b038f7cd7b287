import Glibc

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

    /// The database file's bytes; `nil` when there is none.
    /// - Throws: ``DconfError`` when it exists but cannot be read.
    public func readDatabase() throws(DconfError) -> [UInt8]? {
        try Self.contents(of: databasePath)
    }

    /// The bytes of the file at `path`; `nil` when there is none.
    /// - Throws: ``DconfError`` when it exists but cannot be read.
    public static func contents(of path: String) throws(DconfError) -> [UInt8]? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw DconfError("cannot read \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw DconfError("cannot read \(path): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            bytes += chunk.prefix(count)
        }
    }
}
