#if canImport(Glibc)
    import Glibc
#endif

/// A file written whole beside the file it is to replace, then renamed over it
/// (``install(synced:)``) or dropped (``discard()``): a reader of the target finds the old
/// file or the new one, never a part of either.
///
/// Nothing placed beside the target can hang the writer or redirect its bytes: the file is
/// made under a fresh name of its own (the target's name, ``nameInfix``, `-` and a random
/// suffix) with `O_CREAT | O_EXCL | O_NOFOLLOW`, so a FIFO, device, directory or symbolic
/// link found there is never opened and a name already taken is passed over for another;
/// only that regular file is written. With `synced`, the bytes reach the disk before the
/// rename (`fsync` of the file), and the rename before the call returns (`fsync` of the
/// folder).
public struct ReplacementFile: Sendable {
    /// What the names of files written aside put after the target's name.
    public static let nameInfix = ".prefsd-new"

    /// The file it replaces.
    public let target: String
    /// Where it is written.
    public let path: String
    /// The bytes it holds.
    public private(set) var bytes: [UInt8]
    /// Open for writing until it is installed or discarded.
    private let descriptor: Int32

    /// Writes `bytes` to a fresh file beside `target` (in `directory` when given: it must be
    /// on the target's filesystem), first making that directory and checking that `target`
    /// can be replaced (not a directory, not immutable or append-only); with `synced`, the
    /// bytes reach the disk.
    /// - Throws: ``RegularFile/Failure/cannotWrite(_:lackOfRoom:)`` naming the file.
    public init(_ bytes: [UInt8], replacing target: String, asideIn directory: String? = nil, synced: Bool) throws(RegularFile.Failure) {
        let folder = directory ?? Self.folder(of: target)
        try Self.makeDirectory(folder)
        try Self.checkReplaceable(target)
        let (path, descriptor) = try Self.createFresh(in: folder, for: target)
        do throws(RegularFile.Failure) {
            try Self.write(bytes, to: descriptor, path: path)
            if synced, fsync(descriptor) != 0 { throw Self.cannot("write", path) }
        } catch {
            close(descriptor)
            unlink(path)
            throw .cannotWrite("cannot write \(target) (\(error))", lackOfRoom: error.isLackOfRoom)
        }
        self.target = target
        self.path = path
        self.bytes = bytes
        self.descriptor = descriptor
    }

    /// Replaces the file at `target` whole with `bytes`: written aside (in `directory` when
    /// given), then renamed over it; with `synced`, the bytes and the rename reach the disk
    /// before it returns.
    /// - Throws: ``RegularFile/Failure/cannotWrite(_:lackOfRoom:)`` naming the file.
    public static func replace(_ target: String, with bytes: [UInt8], asideIn directory: String? = nil, synced: Bool) throws(RegularFile.Failure) {
        try ReplacementFile(bytes, replacing: target, asideIn: directory, synced: synced).install(synced: synced)
    }

    /// Writes `bytes` over what the file holds (in the room it already takes, when they fit).
    /// - Throws: ``RegularFile/Failure/cannotWrite(_:lackOfRoom:)`` naming the file.
    public mutating func rewrite(with bytes: [UInt8]) throws(RegularFile.Failure) {
        try Self.write(bytes, to: descriptor, path: path)
        guard ftruncate(descriptor, off_t(bytes.count)) == 0 else { throw Self.cannot("write", path) }
        self.bytes = bytes
    }

    /// Renames the file over its target; with `synced`, the rename reaches the disk before
    /// it returns. The file is removed when it cannot be renamed.
    /// - Throws: ``RegularFile/Failure/cannotWrite(_:lackOfRoom:)`` naming the target.
    public func install(synced: Bool) throws(RegularFile.Failure) {
        close(descriptor)
        guard rename(path, target) == 0 else {
            let error: RegularFile.Failure =
                errno == EXDEV
                ? .cannotWrite("cannot replace \(target) with \(path): the two are on different filesystems", lackOfRoom: false)
                : Self.cannot("replace", target)
            unlink(path)
            throw error
        }
        if synced { Self.syncDirectory(Self.folder(of: target)) }
    }

    /// Drops the file: it is removed.
    public func discard() {
        close(descriptor)
        unlink(path)
    }

    /// Removes the files written aside for `target` (in `directory` when given) that a
    /// writer which stopped midway left (`NAME.prefsd-new`, `NAME.prefsd-new-…`), when they
    /// are regular files or symbolic links (removed, never opened). Returns the entries of
    /// those names it left alone, each with what it is.
    public static func removeStale(of target: String, asideIn directory: String? = nil) -> [String] {
        let prefix = name(of: target) + nameInfix
        return removeEntries(in: directory ?? folder(of: target)) { $0 == prefix || $0.hasPrefix(prefix + "-") }
    }

    /// Removes every file written aside in `directory` that a writer which stopped midway
    /// left (`….prefsd-new`, `….prefsd-new-…`), for a folder that holds nothing else, as
    /// ``removeStale(of:asideIn:)`` does for one target.
    public static func removeStale(in directory: String) -> [String] {
        removeEntries(in: directory) { $0.hasSuffix(nameInfix) || $0.contains(nameInfix + "-") }
    }

    /// Removes the entries of `folder` whose names `matches` takes, when they are regular
    /// files or symbolic links; the others it names, each with what it is.
    private static func removeEntries(in folder: String, matching matches: (String) -> Bool) -> [String] {
        guard let listing = opendir(folder.isEmpty ? "/" : folder) else { return [] }
        defer { closedir(listing) }
        var left: [String] = []
        while let entry = readdir(listing) {
            let entryName = withUnsafeBytes(of: entry.pointee.d_name) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            guard matches(entryName) else { continue }
            let path = folder + "/" + entryName
            var info = stat()
            guard lstat(path, &info) == 0 else { continue }
            let kind = info.st_mode & S_IFMT
            if kind == S_IFREG || kind == S_IFLNK {
                unlink(path)
            } else {
                left.append("\(path) (\(RegularFile.kindName(info.st_mode)))")
            }
        }
        return left
    }

    // MARK: Writing aside

    /// The folder holding `path` (`""` for a file at the root).
    private static func folder(of path: String) -> String {
        String(path[..<(path.lastIndex(of: "/") ?? path.startIndex)])
    }

    /// The last component of `path`.
    private static func name(of path: String) -> String {
        path.lastIndex(of: "/").map { String(path[path.index(after: $0)...]) } ?? path
    }

    /// Creates a file no one else has made, in `folder`, for writing in place of `target`:
    /// a random name, with `O_CREAT | O_EXCL | O_NOFOLLOW`, another name when one is taken.
    private static func createFresh(in folder: String, for target: String) throws(RegularFile.Failure) -> (path: String, descriptor: Int32) {
        for _ in 0..<16 {
            let suffix = String(UInt64.random(in: 0...UInt64.max), radix: 36)
            let path = folder + "/" + name(of: target) + nameInfix + "-" + suffix
            let descriptor = open(path, O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if descriptor >= 0 { return (path, descriptor) }
            let number = errno
            if number != EEXIST {
                throw .cannotWrite(
                    "cannot write \(target) (cannot create \(path) for it: \(String(cString: strerror(number))))",
                    lackOfRoom: number == ENOSPC || number == EDQUOT)
            }
        }
        throw .cannotWrite("cannot write \(target): 16 fresh names in a row were taken in \(folder)", lackOfRoom: false)
    }

    /// FS_IOC_GETFLAGS: the inode flags of an open file (`_IOR('f', 1, long)`).
    private static let getFlagsRequest: UInt = 0x8008_6601
    /// The inode flags under which a file cannot be replaced: immutable, append-only.
    private static let unreplaceableFlags: Int32 = 0x10 | 0x20

    /// Throws when `target` cannot be replaced by a rename: it is a directory, or an
    /// immutable or append-only file.
    private static func checkReplaceable(_ target: String) throws(RegularFile.Failure) {
        var info = stat()
        guard lstat(target, &info) == 0 else {
            if errno == ENOENT { return }
            throw cannot("look at", target)
        }
        let kind = info.st_mode & S_IFMT
        if kind == S_IFDIR { throw .cannotWrite("cannot replace \(target): it is a directory; move it away", lackOfRoom: false) }
        guard kind == S_IFREG else { return }
        let descriptor = open(target, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_NOCTTY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { close(descriptor) }
        var flags = 0
        if ioctl(descriptor, getFlagsRequest, &flags) == 0, Int32(truncatingIfNeeded: flags) & unreplaceableFlags != 0 {
            throw .cannotWrite("cannot replace \(target): it is marked immutable or append-only (chattr -i -a lifts it)", lackOfRoom: false)
        }
    }

    /// Writes all of `bytes` at the start of the file open as `descriptor`.
    private static func write(_ bytes: [UInt8], to descriptor: Int32, path: String) throws(RegularFile.Failure) {
        var written = 0
        while written < bytes.count {
            let count = bytes.withUnsafeBytes { buffer in
                pwrite(descriptor, buffer.baseAddress.map { $0 + written }, buffer.count - written, off_t(written))
            }
            if count < 0 {
                if errno == EINTR { continue }
                throw cannot("write", path)
            }
            written += count
        }
    }

    /// Syncs `folder`, so that a rename in it reaches the disk.
    private static func syncDirectory(_ folder: String) {
        let descriptor = open(folder.isEmpty ? "/" : folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        if descriptor >= 0 {
            fsync(descriptor)
            close(descriptor)
        }
    }

    /// Makes `path` (mode 0700) and its missing parents.
    private static func makeDirectory(_ path: String) throws(RegularFile.Failure) {
        var prefix = ""
        for part in path.split(separator: "/", omittingEmptySubsequences: true) {
            prefix += "/" + part
            if mkdir(prefix, 0o700) != 0 && errno != EEXIST {
                throw cannot("make the directory", prefix)
            }
        }
    }

    /// "cannot VERB PATH: " and the reason `errno` gives.
    private static func cannot(_ verb: String, _ path: String) -> RegularFile.Failure {
        let number = errno
        return .cannotWrite("cannot \(verb) \(path): \(String(cString: strerror(number)))", lackOfRoom: number == ENOSPC || number == EDQUOT)
    }
}
