import Foundation
import Synchronization

/// A child process started with `posix_spawn`, for test helpers that run a command to its
/// end. Unlike Foundation's `Process`, starting one does not list the test process's open
/// descriptors (which reads past a buffer beyond ~1,100 of them): the child closes every
/// descriptor above 2 itself (`posix_spawn_file_actions_addclosefrom_np`). Its signal mask
/// is emptied and its signals set to their defaults, so a child started from a thread that
/// blocks SIGTERM still ends on it.
final class SpawnedProcess: Sendable {
    /// The child's process ID.
    let pid: pid_t
    private let status = Mutex<Int32?>(nil)

    /// Starts `executable` (a path) with `arguments` and exactly `environment`; its standard
    /// input reads /dev/null, its standard output and error go to `output` and `error`.
    init(executable: String, arguments: [String], environment: [String: String], output: Int32, error: Int32) throws {
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, output, 1)
        posix_spawn_file_actions_adddup2(&actions, error, 2)
        guard let closeFrom = Self.addCloseFrom else {
            throw BusTestSupportError.processFailed("this C library has no posix_spawn_file_actions_addclosefrom_np (glibc 2.34 or later has)")
        }
        closeFrom(&actions, 3)

        var attributes = posix_spawnattr_t()
        posix_spawnattr_init(&attributes)
        defer { posix_spawnattr_destroy(&attributes) }
        var none = sigset_t()
        sigemptyset(&none)
        posix_spawnattr_setsigmask(&attributes, &none)
        var all = sigset_t()
        sigfillset(&all)
        posix_spawnattr_setsigdefault(&attributes, &all)
        posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))

        let argv = ([executable] + arguments).map { strdup($0) } + [nil]
        let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var child: pid_t = 0
        let result = posix_spawn(&child, executable, &actions, &attributes, argv, envp)
        guard result == 0 else {
            throw BusTestSupportError.processFailed("cannot start \(executable): \(String(cString: strerror(result)))")
        }
        pid = child
    }

    /// glibc's `posix_spawn_file_actions_addclosefrom_np` (2.34+), which Swift's Glibc
    /// module does not declare (it needs _GNU_SOURCE).
    private static let addCloseFrom: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32)? = {
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "posix_spawn_file_actions_addclosefrom_np") else { return nil }
        return unsafeBitCast(symbol, to: (@convention(c) (UnsafeMutablePointer<posix_spawn_file_actions_t>, Int32) -> Int32).self)
    }()

    /// The exit status once it ended (the signal's number if a signal ended it, as
    /// Foundation's `terminationStatus` reports it); `nil` while it runs. Reaps it.
    func exitStatus() -> Int32? {
        status.withLock { known in
            if let known { return known }
            var raw: Int32 = 0
            guard waitpid(pid, &raw, WNOHANG) == pid else { return nil }
            let signal = raw & 0x7f
            known = signal == 0 ? (raw >> 8) & 0xff : signal
            return known
        }
    }

    /// Waits, at most `timeout`, for it to end; its exit status, or `nil` if it still runs.
    func waitForExit(timeout: Duration) -> Int32? {
        let deadline = ContinuousClock.now + timeout
        while true {
            if let status = exitStatus() { return status }
            guard ContinuousClock.now < deadline else { return nil }
            usleep(2_000)
        }
    }
}

/// Everything `descriptor` gives until its end (or an error).
func readToEnd(_ descriptor: Int32) -> Data {
    var data = Data()
    var chunk = [UInt8](repeating: 0, count: 65536)
    while true {
        let count = chunk.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
        if count > 0 {
            data.append(contentsOf: chunk[0..<count])
        } else if count == 0 || errno != EINTR {
            return data
        }
    }
}
