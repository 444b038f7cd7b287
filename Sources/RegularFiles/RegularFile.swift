#if canImport(Glibc)
    import Glibc
#endif

/// Reading a file at a path someone else may control (a client's `/.flatpak-info`, an
/// administrator's managed file, dconf's database, a roaming file) without trusting what is
/// there: only a regular file is opened, never a FIFO (whose `open` blocks until a writer
/// comes), device or socket, and never more than a limit is read. Writing one is
/// ``ReplacementFile``'s.
public enum RegularFile {
    /// Why a file was not read or written.
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Nothing is at the path (`ENOENT`, or `ENOTDIR` on the way).
        case missing
        /// The path or the file cannot be looked at or opened; the system's reason.
        case cannotOpen(String)
        /// Something other than a regular file is there (its kind: "a FIFO", …).
        case notRegular(String)
        /// The file holds more bytes than the limit (its size, or more than the limit when it
        /// grew while being read).
        case tooLarge(size: Int, limit: Int)
        /// Reading failed; the system's reason.
        case cannotRead(String)
        /// The file belongs to another user (its owner's user ID) than the one asked for.
        case notOwned(owner: UInt32)
        /// A file could not be written or put in place: what and why, in a sentence naming
        /// the file; `lackOfRoom` when its disk is full or the user's quota spent (`ENOSPC`,
        /// `EDQUOT`).
        case cannotWrite(String, lackOfRoom: Bool)

        /// What went wrong, in words.
        public var description: String {
            switch self {
            case .missing: "there is no such file"
            case .cannotOpen(let reason): "cannot open it: \(reason)"
            case .notRegular(let kind): "it is not a regular file but \(kind)"
            case .tooLarge(let size, let limit): "it is \(size) bytes, over the limit of \(limit)"
            case .cannotRead(let reason): "cannot read it: \(reason)"
            case .notOwned(let owner): "it belongs to user \(owner), not to the user reading it"
            case .cannotWrite(let sentence, _): sentence
            }
        }

        /// Whether a file could not be written for lack of room on its disk.
        public var isLackOfRoom: Bool {
            if case .cannotWrite(_, let lackOfRoom) = self { lackOfRoom } else { false }
        }
    }

    /// The bytes of the regular file at `path`, at most `limit` of them; with `owner`, only
    /// when the file belongs to that user.
    ///
    /// The path is looked at first (`stat`, or `lstat` when `followingSymlinks` is false) and
    /// opened only when it is a regular file, with `O_NONBLOCK` (and `O_NOFOLLOW`), then
    /// checked again on the open descriptor, so a FIFO swapped in between is not waited on.
    /// A symbolic link that loops is not a regular file.
    /// - Throws: ``Failure``.
    public static func contents(atPath path: String, limit: Int, followingSymlinks: Bool, owner: uid_t? = nil) throws(Failure) -> [UInt8] {
        var info = stat()
        guard (followingSymlinks ? stat(path, &info) : lstat(path, &info)) == 0 else {
            let number = errno
            if number == ENOENT || number == ENOTDIR { throw .missing }
            if number == ELOOP { throw .notRegular("a symbolic link that loops") }
            throw .cannotOpen(String(cString: strerror(number)))
        }
        try check(info, limit: limit, owner: owner)
        let flags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY | (followingSymlinks ? 0 : O_NOFOLLOW)
        let descriptor = open(path, flags)
        guard descriptor >= 0 else {
            let number = errno
            if number == ELOOP { throw .notRegular("a symbolic link") }
            throw .cannotOpen(String(cString: strerror(number)))
        }
        defer { close(descriptor) }
        guard fstat(descriptor, &info) == 0 else { throw .cannotOpen(String(cString: strerror(errno))) }
        try check(info, limit: limit, owner: owner)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(Int(info.st_size))
        var chunk = [UInt8](repeating: 0, count: min(64 << 10, limit + 1))
        while true {
            let count = chunk.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress, $0.count) }
            if count < 0 {
                if errno == EINTR { continue }
                throw .cannotRead(String(cString: strerror(errno)))
            }
            if count == 0 { return bytes }
            bytes += chunk[0..<count]
            // It may grow while being read: never hold more than the limit.
            guard bytes.count <= limit else { throw .tooLarge(size: bytes.count, limit: limit) }
        }
    }

    /// Throws unless `info` is a regular file of at most `limit` bytes (belonging to
    /// `owner`, when given).
    private static func check(_ info: stat, limit: Int, owner: uid_t?) throws(Failure) {
        guard (info.st_mode & S_IFMT) == S_IFREG else { throw .notRegular(kindName(info.st_mode)) }
        guard Int(info.st_size) <= limit else { throw .tooLarge(size: Int(info.st_size), limit: limit) }
        if let owner, info.st_uid != owner { throw .notOwned(owner: info.st_uid) }
    }

    /// What a file of mode `mode` is, in words ("a FIFO"), for messages.
    public static func kindName(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFSOCK: "a socket"
        case S_IFLNK: "a symbolic link"
        default: "a special file"
        }
    }
}
