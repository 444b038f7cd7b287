import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// A ballast file in the store directory (`store.reserve`, 1 MiB by default) that keeps
/// room on the disk for removals.
///
/// SQLite needs room even to delete: the WAL records the change before the database is
/// touched. When the file system is full and a transaction that only removes fails with
/// "disk full", the store deletes the ballast and tries again, so removals go through.
/// While the ballast is released, a transaction that adds data goes through only when the
/// room it needs leaves the ballast's room free (see `DomainStore.writeOnFullDisk`); the
/// ballast is made again as soon as the file system has room for it and for a write
/// besides (``slack``).
final class DiskReserve: Sendable {
    /// The ballast's file name inside the store directory.
    static let fileName = "store.reserve"

    /// Where the ballast is.
    enum State: Sendable, Equatable {
        /// On disk, at full size.
        case held
        /// Never made (no room when the store opened): writes go on normally, and the
        /// ballast is made as soon as there is room.
        case missing
        /// Deleted to let a removal through on a full disk: writes that add data are
        /// refused until it can be made again.
        case released
    }

    let path: String
    let size: Int
    /// The directory holding the ballast, whose file system ``freeBytes()`` asks about
    /// after every commit: kept as given (Foundation's path bridging cost some 20,000
    /// instructions per commit).
    private let directoryPath: String
    private let current = Mutex(State.missing)

    /// Makes (or finds) the ballast in `directory`.
    init(directory: URL, size: Int) {
        path = directory.appendingPathComponent(Self.fileName).path
        directoryPath = directory.path
        self.size = size
        let made = make()
        current.withLock { $0 = made ? .held : .missing }
    }

    /// Where the ballast is now.
    var state: State { current.withLock { $0 } }

    /// Deletes the ballast to free its room; returns whether there was one to delete.
    /// Called on the store's writer queue only, like ``restoreIfRoom()``: the state is
    /// read and set under the mutex, the file is touched outside it.
    func release() -> Bool {
        guard state == .held else { return false }
        unlink(path)
        current.withLock { $0 = .released }
        return true
    }

    /// The room beyond the ballast's own that the file system must have before the
    /// ballast is made again: a write's WAL frames (64 KiB, or 1/16 of the ballast).
    var slack: Int { max(64 << 10, size / 16) }

    /// Makes the ballast again when it is not held and the file system has room for it
    /// and ``slack`` besides; returns whether it is held now.
    @discardableResult
    func restoreIfRoom() -> Bool {
        if state == .held { return true }
        guard freeBytes() >= size + slack, make() else { return false }
        current.withLock { $0 = .held }
        return true
    }

    /// Free bytes for this user on the store's file system (0 when unknown).
    func freeBytes() -> Int {
        var info = statvfs()
        guard statvfs(directoryPath, &info) == 0 else { return 0 }
        return Int(info.f_bavail) * Int(info.f_frsize)
    }

    /// Creates the file (mode 0600, narrowed if it was opened up) with its blocks
    /// allocated; removes a partial one.
    private func make() -> Bool {
        let descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { return false }
        defer { close(descriptor) }
        fchmod(descriptor, 0o600)
        var info = stat()
        if fstat(descriptor, &info) == 0, Int(info.st_size) >= size, Int(info.st_blocks) * 512 >= size { return true }
        guard posix_fallocate(descriptor, 0, off_t(size)) == 0, fsync(descriptor) == 0 else {
            unlink(path)
            return false
        }
        return true
    }
}
