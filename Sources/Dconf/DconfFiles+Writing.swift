import Glibc

/// A file written beside the file it is to replace, under a name of its own
/// (`TARGET.prefsd-new-` and a random suffix), waiting to be renamed over it
/// (``DconfFiles/install(_:synced:)``) or dropped (``DconfFiles/discard(_:)``).
public struct DconfAside: Sendable {
    /// The file it replaces.
    public let target: String
    /// Where it is.
    public let path: String
    /// The bytes it holds.
    public private(set) var bytes: [UInt8]
    /// Open for writing until it is installed or discarded.
    fileprivate let descriptor: Int32

    /// Writes `bytes` over what the file holds (in the room it already takes, when they fit).
    /// - Throws: ``DconfError`` naming the file when they cannot be written.
    public mutating func rewrite(with bytes: [UInt8]) throws(DconfError) {
        try DconfFiles.write(bytes, to: descriptor, path: path)
        guard ftruncate(descriptor, off_t(bytes.count)) == 0 else { throw DconfError.cannot("write", path) }
        self.bytes = bytes
    }
}

/// Writing dconf's files so that nothing placed beside them can hang prefsd or redirect its
/// writes: each file is written under a fresh name of its own, made with `O_EXCL |
/// O_NOFOLLOW` (so a FIFO, device, directory or symbolic link found there is never opened,
/// and a name already taken is passed over), then renamed over the file it replaces.
extension DconfFiles {
    /// How the names of files written aside begin: the target's name and this.
    public static let asideInfix = ".prefsd-new"

    /// Replaces the database file whole with `bytes`: written beside it, then renamed over
    /// it, so a reader maps either the old file or the new one. Not synced: prefsd's store
    /// is the truth, and the file is made again from it at start.
    /// - Throws: ``DconfError`` naming the file when it cannot be written.
    public func writeDatabase(_ bytes: [UInt8]) throws(DconfError) {
        try Self.install(try writeAside(bytes), synced: false)
    }

    /// Writes `bytes` beside the database file, to be renamed over it once the change they
    /// hold is committed (``install(_:synced:)``), or dropped (``discard(_:)``). First checks
    /// that the database file can be replaced: not a directory, not immutable or append-only.
    /// - Throws: ``DconfError`` naming the file when it cannot be written or replaced.
    public func writeAside(_ bytes: [UInt8]) throws(DconfError) -> DconfAside {
        try Self.writeAside(bytes, replacing: databasePath, synced: false)
    }

    /// Replaces the file at `path` whole with `bytes` (written beside it, renamed over it),
    /// first making its directory; with `synced`, the bytes and the rename reach the disk
    /// before it returns.
    /// - Throws: ``DconfError`` naming the file when it cannot be written.
    public static func replace(_ path: String, with bytes: [UInt8], synced: Bool) throws(DconfError) {
        try install(try writeAside(bytes, replacing: path, synced: synced), synced: synced)
    }

    /// Renames `aside` over the file it replaces; with `synced`, the rename reaches the disk
    /// before it returns. The file aside is removed when it cannot be renamed.
    /// - Throws: ``DconfError`` naming the file when it cannot be replaced.
    public static func install(_ aside: DconfAside, synced: Bool) throws(DconfError) {
        close(aside.descriptor)
        guard rename(aside.path, aside.target) == 0 else {
            let error = DconfError.cannot("replace", aside.target)
            unlink(aside.path)
            throw error
        }
        if synced { syncDirectory(of: aside.target) }
    }

    /// Drops `aside`: its file is removed.
    public static func discard(_ aside: DconfAside) {
        close(aside.descriptor)
        unlink(aside.path)
    }

    /// Removes the files written aside that a prefsd which stopped midway left beside the
    /// database (`user.prefsd-new`, `user.prefsd-new-…`), when they are regular files or
    /// symbolic links (removed, never opened). Returns the entries of those names it left
    /// alone, each with what it is.
    public func removeStaleAsides() -> [String] {
        guard let directory = opendir(databaseDirectory) else { return [] }
        defer { closedir(directory) }
        let prefix = name + Self.asideInfix
        var left: [String] = []
        while let entry = readdir(directory) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard entryName == prefix || entryName.hasPrefix(prefix + "-") else { continue }
            let path = databaseDirectory + "/" + entryName
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let kind = info.st_mode & S_IFMT
            if kind == S_IFREG || kind == S_IFLNK {
                unlink(path)
            } else {
                left.append("\(path) (\(Self.kindName(info.st_mode)))")
            }
        }
        return left
    }

    /// Tells every running dconf client to reopen the database, as dconf-service does
    /// (`dconf_shm_flag`): sets the first byte of the invalidation file the clients map, and
    /// removes the file so that the next client makes a fresh one. Only a regular file is
    /// written (opened without following a link, without waiting); no file is no client.
    /// - Throws: ``DconfError`` naming the file when something else is there, or it cannot
    ///   be opened.
    public func invalidate() throws(DconfError) {
        let path = invalidationPath
        let descriptor = open(path, O_RDWR | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return }
            if errno == ELOOP { throw DconfError("\(path) is a symbolic link, not dconf's invalidation file; prefsd leaves it alone") }
            throw DconfError.cannot("open", path)
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw DconfError("\(path) is \(Self.kindName(info.st_mode)), not dconf's invalidation file; prefsd leaves it alone")
        }
        // Two bytes long first, so a client that made it empty is not sent SIGBUS.
        var zero: UInt8 = 0
        var one: UInt8 = 1
        if pwrite(descriptor, &zero, 1, 1) == 1 {
            _ = pwrite(descriptor, &one, 1, 0)
        }
        unlink(path)
    }

    // MARK: Writing aside

    /// Writes `bytes` to a fresh file beside `target`, first making the directory and
    /// checking that `target` can be replaced; with `synced`, the bytes reach the disk.
    private static func writeAside(_ bytes: [UInt8], replacing target: String, synced: Bool) throws(DconfError) -> DconfAside {
        let directory = String(target[..<(target.lastIndex(of: "/") ?? target.startIndex)])
        try makeDirectory(directory, mode: 0o700)
        try checkReplaceable(target)
        let (path, descriptor) = try createFresh(beside: target)
        do throws(DconfError) {
            try write(bytes, to: descriptor, path: path)
            if synced, fsync(descriptor) != 0 { throw DconfError.cannot("write", path) }
        } catch {
            close(descriptor)
            unlink(path)
            throw DconfError("cannot write \(target) (\(error))", lackOfRoom: error.isLackOfRoom)
        }
        return DconfAside(target: target, path: path, bytes: bytes, descriptor: descriptor)
    }

    /// Creates a file no one else has made, beside `target`, for writing: a random name,
    /// with `O_CREAT | O_EXCL | O_NOFOLLOW`, another name when one is taken.
    private static func createFresh(beside target: String) throws(DconfError) -> (path: String, descriptor: Int32) {
        for _ in 0..<16 {
            let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let path = target + asideInfix + "-" + suffix
            let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 { return (path, descriptor) }
            if errno != EEXIST {
                throw DconfError(
                    "cannot write \(target) (cannot create \(path) beside it: \(String(cString: strerror(errno))))",
                    lackOfRoom: errno == ENOSPC || errno == EDQUOT)
            }
        }
        throw DconfError("cannot write beside \(target): 16 fresh names in a row were taken")
    }

    /// FS_IOC_GETFLAGS: the inode flags of an open file (`_IOR('f', 1, long)`).
    private static let getFlagsRequest: UInt = 0x8008_6601
    /// The inode flags under which a file cannot be replaced: immutable, append-only.
    private static let unreplaceableFlags = 0x10 | 0x20

    /// Throws when `target` cannot be replaced by a rename: it is a directory, or an
    /// immutable or append-only file.
    private static func checkReplaceable(_ target: String) throws(DconfError) {
        var info = stat()
        guard lstat(target, &info) == 0 else {
            if errno == ENOENT { return }
            throw DconfError.cannot("look at", target)
        }
        let kind = info.st_mode & S_IFMT
        if kind == S_IFDIR { throw DconfError("cannot replace \(target): it is a directory; move it away") }
        guard kind == S_IFREG else { return }
        let descriptor = open(target, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var flags = 0
        if ioctl(descriptor, getFlagsRequest, &flags) == 0, Int32(truncatingIfNeeded: flags) & Int32(unreplaceableFlags) != 0 {
            throw DconfError("cannot replace \(target): it is marked immutable or append-only (chattr -i -a lifts it)")
        }
    }

    /// Writes all of `bytes` at the start of the file open as `descriptor`.
    fileprivate static func write(_ bytes: [UInt8], to descriptor: Int32, path: String) throws(DconfError) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                pwrite(descriptor, buffer.baseAddress.map { $0 + written }, buffer.count - written, off_t(written))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw DconfError.cannot("write", path)
            }
            written += count
        }
    }

    /// Syncs the directory holding `path`, so that a rename in it reaches the disk.
    private static func syncDirectory(of path: String) {
        let directory = String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
        let folder = open(directory.isEmpty ? "/" : directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if folder >= 0 {
            fsync(folder)
            close(folder)
        }
    }

    /// Makes `path` and its missing parents.
    private static func makeDirectory(_ path: String, mode: mode_t) throws(DconfError) {
        var prefix = ""
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + part
            if mkdir(prefix, mode) != 0 && errno != EEXIST {
                throw DconfError.cannot("make the directory", prefix)
            }
        }
    }

    /// What a file of mode `mode` is, in words.
    static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFLNK: "a symbolic link"
        case S_IFIFO: "a FIFO"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        default: "not a regular file"
        }
    }
}

extension DconfError {
    /// "cannot VERB PATH: " and the reason `errno` gives.
    static func cannot(_ verb: String, _ path: String) -> DconfError {
        let number = errno
        return DconfError("cannot \(verb) \(path): \(String(cString: strerror(number)))", lackOfRoom: number == ENOSPC || number == EDQUOT)
    }
}
