import Foundation
import RegularFiles

#if canImport(Glibc)
    import Glibc
#endif

/// The roaming folder on disk, and this machine's own directory beside it.
///
/// Each machine writes only `<identity>.prefsd-roaming` in the folder, and always whole:
/// the new version is written and flushed under a temporary name in the local directory
/// (outside the folder, so the sync engine never sees it, on the same filesystem), then
/// renamed over the old one. The local directory also keeps what this machine adopted and
/// copies of the latest files set aside.
public struct RoamingFolder: Sendable {
    /// The folder the sync engine keeps the same on every machine.
    public let directory: URL
    /// This machine's directory beside it: `<folder>.local` (temporary files, the adopted
    /// state, files set aside).
    public let localDirectory: URL

    /// The suffix of every machine's file.
    public static let suffix = ".prefsd-roaming"

    /// Makes a folder; nothing is created until a file is written.
    public init(directory: URL) {
        self.directory = directory.standardizedFileURL
        let base = self.directory.lastPathComponent
        localDirectory = self.directory.deletingLastPathComponent().appendingPathComponent(base + ".local", isDirectory: true)
    }

    /// The name of a machine's file.
    public static func fileName(for machine: MachineID) -> String { machine.rawValue + suffix }

    /// The machine a file name belongs to, or `nil` when it is not `<identity>.prefsd-roaming`.
    public static func machine(ofFileName name: String) -> MachineID? {
        let bytes = Array(name.utf8), end = Array(suffix.utf8)
        guard bytes.count > end.count, bytes.suffix(end.count).elementsEqual(end) else { return nil }
        return MachineID(String(decoding: bytes.dropLast(end.count), as: UTF8.self))
    }

    /// A file's name, told apart from every other by its bytes, as the filesystem does:
    /// `==` and hashing of `String` are by canonical equivalence, under which two files
    /// whose names differ only in their normalization would be one.
    public struct FileName: Sendable, Hashable, Comparable, CustomStringConvertible {
        /// The name.
        public let text: String

        /// Makes a name.
        public init(_ text: String) { self.text = text }

        public static func == (lhs: FileName, rhs: FileName) -> Bool { lhs.text.utf8.elementsEqual(rhs.text.utf8) }

        public func hash(into hasher: inout Hasher) {
            hasher.combine(text.utf8.count)
            for byte in text.utf8 { hasher.combine(byte) }
        }

        /// Ordered by bytes.
        public static func < (lhs: FileName, rhs: FileName) -> Bool { lhs.text.utf8.lexicographicallyPrecedes(rhs.text.utf8) }

        public var description: String { text }
    }

    /// What identifies one version of a file: when it changes, the file is read again.
    public struct Fingerprint: Sendable, Hashable {
        /// Its size in bytes.
        public var size: Int64
        /// Its modification time, in nanoseconds.
        public var modified: Int64
        /// Its inode (a rename-in gives a new one).
        public var inode: UInt64
    }

    /// The files in the folder whose names end with ``suffix`` (and do not start with `.`:
    /// the sync engine's temporary files), with their fingerprints.
    public func listing() -> [FileName: Fingerprint] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory.path) else { return [:] }
        var result: [FileName: Fingerprint] = [:]
        let end = Array(Self.suffix.utf8)
        for name in names where name.utf8.first != UInt8(ascii: ".") && Array(name.utf8.suffix(end.count)) == end {
            var info = stat()
            guard lstat(directory.appendingPathComponent(name).path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            result[FileName(name)] = Fingerprint(
                size: Int64(info.st_size),
                modified: Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec),
                inode: UInt64(info.st_ino))
        }
        return result
    }

    /// Whether the folder holds a file of this name.
    public func contains(_ name: FileName) -> Bool {
        FileManager.default.fileExists(atPath: directory.appendingPathComponent(name.text).path)
    }

    /// Reads a file of the folder, refusing one larger than `limit` without reading it.
    public func read(_ name: String, limit: Int) throws(RoamingError) -> [UInt8] {
        try Self.read(directory.appendingPathComponent(name), limit: limit)
    }

    /// Reads a file, refusing one larger than `limit` without reading it; `nil` when it
    /// does not exist.
    public static func readIfPresent(_ url: URL, limit: Int) throws(RoamingError) -> [UInt8]? {
        do {
            return try RegularFile.contents(atPath: url.path, limit: limit, followingSymlinks: false)
        } catch .missing {
            return nil
        } catch {
            throw failure(error, reading: url, limit: limit)
        }
    }

    /// Reads a regular file (not through a symbolic link), refusing one larger than `limit`.
    static func read(_ url: URL, limit: Int) throws(RoamingError) -> [UInt8] {
        do {
            return try RegularFile.contents(atPath: url.path, limit: limit, followingSymlinks: false)
        } catch {
            throw failure(error, reading: url, limit: limit)
        }
    }

    /// Why the file at `url` was not read, as roaming says it.
    private static func failure(_ error: RegularFile.Failure, reading url: URL, limit: Int) -> RoamingError {
        if case .tooLarge(let size, _) = error {
            return .overLimit("the file has \(size) bytes, over the \(limit) a roaming file may have")
        }
        return .io("cannot read \(url.path): \(error)")
    }

    /// Writes this machine's file whole into the folder (temporary file in the local
    /// directory, flushed, renamed in, the folder flushed).
    public func writeOwn(_ bytes: [UInt8], machine: MachineID) throws(RoamingError) {
        try Self.ensureDirectory(directory)
        try writeWhole(bytes, to: directory.appendingPathComponent(Self.fileName(for: machine)))
    }

    /// Writes a file of the local directory whole.
    public func writeLocal(_ bytes: [UInt8], name: String) throws(RoamingError) {
        try writeWhole(bytes, to: localDirectory.appendingPathComponent(name))
    }

    /// Where the adopted state is kept.
    public var adoptedURL: URL { localDirectory.appendingPathComponent("adopted.prefsd-roaming") }

    /// Where copies of files set aside are kept.
    public var setAsideDirectory: URL { localDirectory.appendingPathComponent("set-aside", isDirectory: true) }

    /// Keeps a copy of a file set aside in ``setAsideDirectory`` under its own name (the
    /// latest bad version only), within `limits.setAsideCopies` copies and
    /// `limits.setAsideBytes` bytes: older copies are dropped to make room, the oldest
    /// first, so files set aside under ever new names cannot fill the disk; a copy that
    /// alone passes the bytes bound is not kept. The folder itself is left alone: removing
    /// the file there would remove it on every machine.
    ///
    /// - Returns: the copy's path (`nil` when none was kept) and the paths of the copies
    ///   dropped.
    public func setAside(_ name: FileName, bytes: [UInt8], limits: RoamingLimits) -> (copy: String?, dropped: [String]) {
        guard limits.setAsideCopies > 0, bytes.count <= limits.setAsideBytes else { return (nil, []) }
        let directory = setAsideDirectory
        do { try Self.ensureDirectory(directory) } catch { return (nil, []) }
        // The copies kept, oldest first; one of the same name is replaced by this one.
        var kept: [(name: FileName, size: Int, modified: Int64)] = []
        for other in (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [] where FileName(other) != name {
            var info = stat()
            guard lstat(directory.appendingPathComponent(other).path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { continue }
            kept.append((FileName(other), Int(info.st_size), Int64(info.st_mtim.tv_sec) * 1_000_000_000 + Int64(info.st_mtim.tv_nsec)))
        }
        kept.sort { $0.modified != $1.modified ? $0.modified < $1.modified : $0.name < $1.name }
        var count = kept.count + 1
        var total = kept.reduce(bytes.count) { $0 + $1.size }
        var dropped: [String] = []
        for old in kept where count > limits.setAsideCopies || total > limits.setAsideBytes {
            let path = directory.appendingPathComponent(old.name.text).path
            guard unlink(path) == 0 || errno == ENOENT else { continue }
            dropped.append(path)
            count -= 1
            total -= old.size
        }
        guard count <= limits.setAsideCopies, total <= limits.setAsideBytes else { return (nil, dropped) }
        let copy = directory.appendingPathComponent(name.text)
        do {
            try writeWhole(bytes, to: copy)
            return (copy.path, dropped)
        } catch {
            return (nil, dropped)
        }
    }

    /// Where files are written before they are renamed into place: the local directory's
    /// `tmp`, outside the folder (the sync engine never sees a part of a file), on its
    /// filesystem.
    var temporaryDirectory: URL { localDirectory.appendingPathComponent("tmp", isDirectory: true) }

    /// Removes the files a writer that stopped midway left in ``temporaryDirectory``
    /// (regular files and links, never opened); returns the entries it left alone, each with
    /// what it is.
    public func removeStaleTemporaries() -> [String] {
        ReplacementFile.removeStale(in: temporaryDirectory.path)
    }

    /// Writes `destination` whole: written and flushed aside in ``temporaryDirectory``,
    /// renamed over it, the folder flushed.
    private func writeWhole(_ bytes: [UInt8], to destination: URL) throws(RoamingError) {
        do {
            try ReplacementFile.replace(destination.path, with: bytes, asideIn: temporaryDirectory.path, synced: true)
        } catch {
            throw .io("\(error)")
        }
    }

    static func ensureDirectory(_ url: URL) throws(RoamingError) {
        do {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        } catch {
            throw .io("cannot create \(url.path): \(error.localizedDescription)")
        }
    }
}
