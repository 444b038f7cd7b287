import Foundation

/// A small tmpfs mounted for one test, unmounted at the end: a disk that fills up. The tests
/// run as root (CI and this machine); when `mount` is refused the test fails, it never skips.
public final class SmallFileSystem: Sendable {
    /// Where it is mounted.
    public let mountPoint: URL
    /// Whether the mount point is its own, removed at the end.
    private let ownsMountPoint: Bool

    /// Mounts a tmpfs of `megabytes` at `mountPoint` (made when missing), or at a fresh
    /// directory of its own.
    public init(megabytes: Int, at mountPoint: URL? = nil) throws {
        ownsMountPoint = mountPoint == nil
        self.mountPoint =
            mountPoint
            ?? FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-tmpfs-\(getpid())-\(UInt32.random(in: 0...UInt32.max))")
        try FileManager.default.createDirectory(at: self.mountPoint, withIntermediateDirectories: true)
        let mounted = try runCommand("mount", ["-t", "tmpfs", "-o", "size=\(megabytes)m,mode=0700", "tmpfs", self.mountPoint.path])
        guard mounted.status == 0 else {
            if ownsMountPoint { try? FileManager.default.removeItem(at: self.mountPoint) }
            throw FixtureError(
                "cannot mount a \(megabytes) MiB tmpfs (the disk-full tests need root or CAP_SYS_ADMIN): \(mounted.stderr.trimmingCharacters(in: .whitespacesAndNewlines))"
            )
        }
    }

    /// Gives the file system room again.
    public func grow(megabytes: Int) throws {
        let grown = try runCommand("mount", ["-o", "remount,size=\(megabytes)m", mountPoint.path])
        guard grown.status == 0 else { throw FixtureError("remount: \(grown.stderr)") }
    }

    /// Fills what room is left with a file named `name` (as a user's other files would),
    /// until the file system refuses more; returns the file.
    @discardableResult
    public func fill(named name: String = "filler") throws -> URL {
        let filler = mountPoint.appendingPathComponent(name)
        guard FileManager.default.createFile(atPath: filler.path, contents: nil) else { throw FixtureError("cannot create \(filler.path)") }
        let handle = try FileHandle(forWritingTo: filler)
        defer { try? handle.close() }
        let chunk = Data(repeating: 0x5A, count: 4096)
        while (try? handle.write(contentsOf: chunk)) != nil {}
        try? handle.synchronize()
        return filler
    }

    deinit {
        _ = try? runCommand("umount", ["-l", mountPoint.path])
        if ownsMountPoint { try? FileManager.default.removeItem(at: mountPoint) }
    }
}
