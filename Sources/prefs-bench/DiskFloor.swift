import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// The disk's floor for one durable write: a 4 KiB `pwrite` over the start of a file in the
/// store's own directory, then `fdatasync`, timed together. The file is written once before
/// the first sample, so every sample overwrites blocks already allocated, as SQLite's WAL
/// does once it wraps (an appending write also commits the file's new size: slower).
final class DiskFloor {
    /// The file's name in the store directory.
    static let fileName = ".prefs-bench-fdatasync"

    private let path: String
    private let descriptor: Int32
    private var page = [UInt8](repeating: 0, count: 4096)
    private var round: UInt8 = 0

    /// Opens (creating) the probe file in `directory` and writes its first 4 KiB durably.
    init(directory: URL) throws {
        path = directory.appendingPathComponent(Self.fileName).path
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else { throw BenchError("cannot open \(path): \(String(cString: strerror(errno)))") }
        _ = try sample()
    }

    deinit {
        close(descriptor)
        unlink(path)
    }

    /// One 4 KiB overwrite made durable; returns the seconds it took.
    func sample() throws -> Double {
        round &+= 1
        let value = round
        for index in stride(from: 0, to: page.count, by: 64) { page[index] = value }
        let start = now()
        let written = page.withUnsafeBytes { pwrite(descriptor, $0.baseAddress, $0.count, 0) }
        guard written == page.count else { throw BenchError("pwrite of \(path) wrote \(written) of \(page.count) bytes: \(String(cString: strerror(errno)))") }
        guard fdatasync(descriptor) == 0 else { throw BenchError("fdatasync of \(path) failed: \(String(cString: strerror(errno)))") }
        return now() - start
    }
}
