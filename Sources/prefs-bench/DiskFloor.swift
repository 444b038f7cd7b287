import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The disk's floor for one durable write, timed in a file of the store's own directory:
/// writes, then `fdatasync`. The file is written whole before the first sample, so every
/// sample overwrites blocks already allocated (an appending write also commits the file's
/// new size: slower).
final class DiskFloor {
    /// What each sample writes.
    enum Pattern {
        /// 4 KiB over the start of the file, every time: the floor.
        case sameBlock
        /// What SQLite's WAL writes for a commit of `pages` pages: each a 24-byte frame
        /// header and a 4 KiB page, 4,120 bytes from the previous frame, cycling through
        /// 1,000 frames (the WAL is checkpointed and rewound every 1,000 pages). Each commit
        /// lands on blocks the previous one did not touch; one frame straddles two of them.
        case walFrames(pages: Int)
    }

    private static let frameBytes = 24 + 4096
    private static let frames = 1000
    private static let walHeaderBytes = 32

    private let pattern: Pattern
    private let path: String
    private let descriptor: Int32
    private var page = [UInt8](repeating: 0, count: 4096)
    private var header = [UInt8](repeating: 0, count: 24)
    private var round = 0

    /// Opens (creating) the probe file in `directory`, named for `pattern`, and writes it
    /// whole, durably.
    init(directory: URL, pattern: Pattern) throws {
        self.pattern = pattern
        let name: String
        switch pattern {
        case .sameBlock: name = ".prefs-bench-fdatasync"
        case .walFrames(let pages): name = pages == 1 ? ".prefs-bench-wal-frames" : ".prefs-bench-wal-frames-\(pages)"
        }
        path = directory.appendingPathComponent(name).path
        descriptor = open(path, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BenchError("cannot open \(path): \(String(cString: strerror(errno)))") }
        let size: Int
        switch pattern {
        case .sameBlock: size = page.count
        case .walFrames(let pages): size = Self.walHeaderBytes + (Self.frames + pages) * Self.frameBytes
        }
        let zeros = [UInt8](repeating: 0, count: size)
        guard zeros.withUnsafeBytes({ pwrite(descriptor, $0.baseAddress, $0.count, 0) }) == size, fsync(descriptor) == 0 else {
            throw BenchError("cannot fill \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// One durable write of the pattern; returns the seconds it took.
    func sample() throws -> Double {
        round += 1
        let mark = UInt8(truncatingIfNeeded: round)
        for index in stride(from: 0, to: page.count, by: 64) { page[index] = mark }
        header[0] = mark
        let start = now()
        switch pattern {
        case .sameBlock:
            try write(page, at: 0)
        case .walFrames(let pages):
            let first = Self.walHeaderBytes + (round * pages % Self.frames) * Self.frameBytes
            for frame in 0..<pages {
                let offset = first + frame * Self.frameBytes
                try write(header, at: offset)
                try write(page, at: offset + header.count)
            }
        }
        guard fdatasync(descriptor) == 0 else { throw BenchError("fdatasync of \(path) failed: \(String(cString: strerror(errno)))") }
        return now() - start
    }

    private func write(_ bytes: [UInt8], at offset: Int) throws {
        let written = bytes.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, off_t(offset)) }
        guard written == bytes.count else {
            throw BenchError("pwrite of \(path) wrote \(written) of \(bytes.count) bytes: \(String(cString: strerror(errno)))")
        }
    }
}
