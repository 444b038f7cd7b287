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

    /// The invalidation file's path.
    public var invalidationPath: String { runtimeDirectory + "/" + name }

    /// The database file's bytes; `nil` when there is none.
    /// - Throws: ``DconfError`` when it exists but cannot be read.
    public func readDatabase() throws(DconfError) -> [UInt8]? {
        let descriptor = open(databasePath, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw DconfError("cannot read \(databasePath): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw DconfError("cannot read \(databasePath): \(String(cString: strerror(errno)))")
            }
            if count == 0 { return bytes }
            bytes += chunk.prefix(count)
        }
    }

    /// Replaces the database file whole with `bytes`: written beside it, then renamed over
    /// it, so a reader maps either the old file or the new one. Not synced: prefsd's store
    /// is the truth, and the file is made again from it at start.
    /// - Throws: ``DconfError`` when the file cannot be written.
    public func writeDatabase(_ bytes: [UInt8]) throws(DconfError) {
        try Self.makeDirectory(databaseDirectory, mode: 0o700)
        let temporary = databasePath + ".prefsd-new"
        let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw DconfError("cannot write \(temporary): \(String(cString: strerror(errno)))") }
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { write(descriptor, $0.baseAddress! + written, $0.count - written) }
            if count < 0 {
                if errno == EINTR { continue }
                let reason = String(cString: strerror(errno))
                close(descriptor)
                unlink(temporary)
                throw DconfError("cannot write \(temporary): \(reason)")
            }
            written += count
        }
        close(descriptor)
        guard rename(temporary, databasePath) == 0 else {
            let reason = String(cString: strerror(errno))
            unlink(temporary)
            throw DconfError("cannot replace \(databasePath): \(reason)")
        }
    }

    /// Tells every running dconf client to reopen the database, as dconf-service does
    /// (`dconf_shm_flag`): sets the first byte of the invalidation file the clients map, and
    /// removes the file so that the next client makes a fresh one.
    public func invalidate() {
        let descriptor = open(invalidationPath, O_RDWR | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        // Two bytes long first, so a client that made it empty is not sent SIGBUS.
        var zero: UInt8 = 0
        var one: UInt8 = 1
        if pwrite(descriptor, &zero, 1, 1) == 1 {
            _ = pwrite(descriptor, &one, 1, 0)
        }
        close(descriptor)
        unlink(invalidationPath)
    }

    /// Makes `path` and its missing parents.
    private static func makeDirectory(_ path: String, mode: mode_t) throws(DconfError) {
        var prefix = ""
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + part
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                throw DconfError("cannot make the directory \(prefix): \(String(cString: strerror(errno)))")
            }
        }
    }
}
