import Foundation

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An exclusive lock on a store directory, held for the life of the process that serves it,
/// so that two services never keep diverging copies of one store in memory.
///
/// The lock is an advisory `flock` on `<directory>/lock`; the kernel releases it when the
/// holder exits, also on SIGKILL, so a crashed service never leaves a stale lock behind.
public final class StoreLock: Sendable {
    private let descriptor: Int32

    /// The lock file's path.
    public let url: URL

    /// Takes the lock, waiting up to `timeout` for a holder that is shutting down (as one
    /// that was replaced does while it finishes its last commits).
    /// - Throws: `StoreError.cannotOpen` when the lock file cannot be made, or when another
    ///   process still holds the lock after `timeout`.
    public init(directory: URL, timeout: Duration = .seconds(10)) throws(StoreError) {
        url = directory.appendingPathComponent("lock")
        try StoreFiles(directory: directory).prepareDirectory()
        let descriptor = open(url.path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            throw .cannotOpen(path: url.path, reason: String(cString: strerror(errno)))
        }
        // O_CREAT's mode applies only to a new file: narrow one left wider by anyone.
        var status = stat()
        if fstat(descriptor, &status) == 0, status.st_mode & 0o7777 != 0o600, fchmod(descriptor, 0o600) != 0 {
            let reason = String(cString: strerror(errno))
            close(descriptor)
            throw .cannotOpen(path: url.path, reason: "cannot restrict the lock file to mode 0600: \(reason)")
        }
        let deadline = ContinuousClock.now + timeout
        while flock(descriptor, LOCK_EX | LOCK_NB) != 0 {
            guard errno == EWOULDBLOCK || errno == EINTR, ContinuousClock.now < deadline else {
                close(descriptor)
                throw .cannotOpen(
                    path: directory.path,
                    reason: "another prefsd is serving this store (it holds \(url.path)); stop it, or start this one with --replace"
                )
            }
            usleep(20_000)
        }
        self.descriptor = descriptor
    }

    deinit {
        close(descriptor)
    }
}
