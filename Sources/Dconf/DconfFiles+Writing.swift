import Glibc
import RegularFiles

/// A database file written beside dconf's, under a name of its own (`user.prefsd-new-` and
/// a random suffix), waiting to be renamed over it (``DconfFiles/install(_:synced:)``) or
/// dropped (``DconfFiles/discard(_:)``).
public typealias DconfAside = ReplacementFile

/// Writing dconf's files so that nothing placed beside them can hang prefsd or redirect its
/// writes: each file is written whole beside the one it replaces, then renamed over it
/// (``ReplacementFile``: a fresh name made with `O_EXCL | O_NOFOLLOW`, so a FIFO, device,
/// directory or symbolic link found there is never opened).
extension DconfFiles {
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
        do {
            return try ReplacementFile(bytes, replacing: databasePath, synced: false)
        } catch {
            throw DconfError(error)
        }
    }

    /// Replaces the file at `path` whole with `bytes` (written beside it, renamed over it),
    /// first making its directory; with `synced`, the bytes and the rename reach the disk
    /// before it returns.
    /// - Throws: ``DconfError`` naming the file when it cannot be written.
    public static func replace(_ path: String, with bytes: [UInt8], synced: Bool) throws(DconfError) {
        do {
            try ReplacementFile.replace(path, with: bytes, synced: synced)
        } catch {
            throw DconfError(error)
        }
    }

    /// Renames `aside` over the file it replaces; with `synced`, the rename reaches the disk
    /// before it returns. The file aside is removed when it cannot be renamed.
    /// - Throws: ``DconfError`` naming the file when it cannot be replaced.
    public static func install(_ aside: DconfAside, synced: Bool) throws(DconfError) {
        do {
            try aside.install(synced: synced)
        } catch {
            throw DconfError(error)
        }
    }

    /// Drops `aside`: its file is removed.
    public static func discard(_ aside: DconfAside) {
        aside.discard()
    }

    /// Removes the files written aside that a prefsd which stopped midway left beside the
    /// database (`user.prefsd-new`, `user.prefsd-new-…`), when they are regular files or
    /// symbolic links (removed, never opened). Returns the entries of those names it left
    /// alone, each with what it is.
    public func removeStaleAsides() -> [String] {
        ReplacementFile.removeStale(of: databasePath)
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
            throw DconfError("cannot open \(path): \(String(cString: strerror(errno)))")
        }
        defer { close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw DconfError("\(path) is \(RegularFile.kindName(info.st_mode)), not dconf's invalidation file; prefsd leaves it alone")
        }
        // Two bytes long first, so a client that made it empty is not sent SIGBUS.
        var zero: UInt8 = 0
        var one: UInt8 = 1
        if pwrite(descriptor, &zero, 1, 1) == 1 {
            _ = pwrite(descriptor, &one, 1, 0)
        }
        unlink(path)
    }
}

extension DconfError {
    /// The error of a file that could not be written, with its message.
    init(_ failure: RegularFile.Failure) {
        self.init(failure.description, lackOfRoom: failure.isLackOfRoom)
    }
}
