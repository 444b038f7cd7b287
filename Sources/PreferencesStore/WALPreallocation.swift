import Foundation
import Glibc

/// The WAL made full-size once the first commit is answered.
///
/// SQLite appends each commit's frames to the WAL until its checkpoint, at 1,000 pages, and
/// then writes over the same file from the start. While the file grows, every commit's
/// `fdatasync` must also make the file's new size durable, a journal commit of the file
/// system besides the data, which on ext4 makes it markedly slower than the same frames
/// written over allocated blocks (figures in docs/benchmarks.md). A fresh
/// WAL (prefsd truncates it when it stops, and SQLite deletes it) grows for the first 200 or
/// so writes after every start; written full of zeros once, durably, it never grows. It is
/// done on the writer queue right after the first commit's completions: a prefsd that only
/// reads never writes it, and its start-up (slower when the zeros were written as the store
/// opened) does not share the disk with it.
///
/// Zeros past the WAL's last valid frame are what SQLite leaves there itself after a
/// checkpoint rewinds the WAL: a frame is only read back when its salt matches the WAL
/// header's and its checksum chains, so recovery stops at the first zero frame, and an all-zero
/// header is an empty WAL. Only the writer queue writes the WAL, so nothing else writes
/// while the zeros go in.
extension DomainStore {
    /// The WAL's full size: its 32-byte header and 1,000 frames (SQLite's
    /// `wal_autocheckpoint`) of a 24-byte frame header and a 4 KiB page.
    @_spi(Testing) public static let preallocatedWALBytes = 32 + 1_000 * (24 + 4096)

    /// ``preallocateWAL()`` the first time it is called; on the writer queue, after a
    /// commit's completions.
    func preallocateWALOnce() {
        guard
            walPreallocated.withLock({ done in
                defer { done = true }; return !done
            })
        else { return }
        preallocateWAL()
    }

    /// Extends the WAL to ``preallocatedWALBytes`` with zeros written and made durable,
    /// unless room is short (below ``lowSpaceBytes`` once it is done) or it is that large
    /// already. On the writer queue, between transactions; a failure only leaves the WAL
    /// to grow by itself as SQLite writes it (logged at debug level).
    func preallocateWAL() {
        let target = Self.preallocatedWALBytes
        guard reserve.freeBytes() >= lowSpaceBytes + target else { return }
        let path = files.databasePath + "-wal"
        // Never created here: SQLite creates the WAL when it opens the database.
        let descriptor = open(path, O_WRONLY | O_CLOEXEC)
        guard descriptor >= 0 else { return }
        defer { Glibc.close(descriptor) }
        var info = stat()
        guard fstat(descriptor, &info) == 0, Int(info.st_size) < target else { return }
        let zeros = [UInt8](repeating: 0, count: 64 << 10)
        var offset = Int(info.st_size)
        while offset < target {
            let count = min(zeros.count, target - offset)
            let written = zeros.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, count, off_t(offset)) }
            guard written > 0 else {
                logger.debug("the WAL was not made full-size", metadata: ["store": "\(files.directoryPath)", "reason": "\(String(cString: strerror(errno)))"])
                // What was written is harmless; SQLite may truncate it away or write over it.
                return
            }
            offset += written
        }
        if fdatasync(descriptor) != 0 {
            logger.debug("the WAL's zeros were not synced", metadata: ["store": "\(files.directoryPath)", "reason": "\(String(cString: strerror(errno)))"])
        }
    }
}
