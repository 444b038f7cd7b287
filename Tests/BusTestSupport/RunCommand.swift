import Foundation
import Synchronization

/// Errors of the test-support helpers.
public enum BusTestSupportError: Error, CustomStringConvertible {
    /// No executable of that name on `PATH`.
    case executableNotFound(String)
    /// A helper process did not do what was expected.
    case processFailed(String)

    /// A sentence describing the problem.
    public var description: String {
        switch self {
        case let .executableNotFound(name): return "\(name) was not found on PATH; install it."
        case let .processFailed(reason): return reason
        }
    }
}

/// The full path of `executable`: itself when it contains a slash, else the first match on `PATH`.
public func findExecutable(_ executable: String) throws -> String {
    if executable.contains("/") { return executable }
    let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
    for directory in path.split(separator: ":") {
        let candidate = "\(directory)/\(executable)"
        if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
    }
    throw BusTestSupportError.executableNotFound(executable)
}

/// Runs `executable` (looked up on `PATH`) with `arguments`, ``helperEnvironment`` plus
/// `environment`, and no standard input; returns its exit status and output. A process still
/// running after `timeout` is killed with SIGKILL (status then reports the signal). Started
/// with posix_spawn (``SpawnedProcess``): it inherits no descriptor but its three standard
/// ones, and no blocked signal, whatever thread the test runs on.
public func runCommand(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:],
    timeout: Duration = .seconds(30)
) throws -> (status: Int32, stdout: String, stderr: String) {
    var outPipe: [Int32] = [-1, -1]
    var errPipe: [Int32] = [-1, -1]
    guard pipe(&outPipe) == 0 else { throw BusTestSupportError.processFailed("pipe: errno \(errno)") }
    guard pipe(&errPipe) == 0 else {
        close(outPipe[0]); close(outPipe[1])
        throw BusTestSupportError.processFailed("pipe: errno \(errno)")
    }
    // Not inherited by what other threads start (the child gets them through dup2).
    for descriptor in outPipe + errPipe { _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC) }
    let process: SpawnedProcess
    do {
        process = try SpawnedProcess(
            executable: try findExecutable(executable), arguments: arguments,
            environment: helperEnvironment.merging(environment) { $1 }, output: outPipe[1], error: errPipe[1])
    } catch {
        outPipe.forEach { close($0) }
        errPipe.forEach { close($0) }
        throw error
    }
    // The child has its own copies: ours are closed, so the pipes end when it does.
    close(outPipe[1])
    close(errPipe[1])

    let output = Mutex<(Data, Data)>((Data(), Data()))
    let readers = DispatchGroup()
    let (outRead, errRead) = (outPipe[0], errPipe[0])
    DispatchQueue.global().async(group: readers) {
        let data = readToEnd(outRead)
        output.withLock { $0.0 = data }
    }
    DispatchQueue.global().async(group: readers) {
        let data = readToEnd(errRead)
        output.withLock { $0.1 = data }
    }
    var status = process.waitForExit(timeout: timeout)
    if status == nil {
        kill(process.pid, SIGKILL)
        status = process.waitForExit(timeout: .seconds(30))
    }
    // A grandchild holding the pipes open must not hang us either; a reader still blocked
    // keeps its descriptor (closing it under the reader could close another's).
    if readers.wait(timeout: .now() + 5) == .success {
        close(outRead)
        close(errRead)
    }
    let (out, err) = output.withLock { $0 }
    return (status ?? SIGKILL, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
}
