import Foundation
import StandardExtras
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
        case .executableNotFound(let name): return "\(name) was not found on PATH; install it."
        case .processFailed(let reason): return reason
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
/// running after `timeout` is killed with SIGKILL (status then reports the signal).
public func runCommand(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:],
    timeout: Duration = .seconds(30)
) throws -> (status: Int32, stdout: String, stderr: String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try findExecutable(executable))
    process.arguments = arguments
    process.environment = helperEnvironment.merging(environment) { $1 }
    let outPipe = Pipe()
    let errPipe = Pipe()
    process.standardOutput = outPipe
    process.standardError = errPipe
    process.standardInput = FileHandle.nullDevice
    let exited = DispatchSemaphore(value: 0)
    process.terminationHandler = { _ in exited.signal() }
    try process.run()

    let output = Mutex<(Data, Data)>((Data(), Data()))
    let readers = DispatchGroup()
    let outHandle = outPipe.fileHandleForReading
    let errHandle = errPipe.fileHandleForReading
    DispatchQueue.global().async(group: readers) {
        let data = outHandle.readDataToEndOfFile()
        output.withLock { $0.0 = data }
    }
    DispatchQueue.global().async(group: readers) {
        let data = errHandle.readDataToEndOfFile()
        output.withLock { $0.1 = data }
    }
    if exited.wait(timeout: .now() + timeout.dispatchInterval) == .timedOut {
        kill(process.processIdentifier, SIGKILL)
        exited.wait()
    }
    // A grandchild holding the pipes open must not hang us either.
    if readers.wait(timeout: .now() + 5) == .success {
        // Both reached end of file: close our ends now rather than whenever Foundation
        // lets go of them (a full test run kept hundreds open; see ServiceFixture).
        try? outHandle.close()
        try? errHandle.close()
    }
    let (out, err) = output.withLock { $0 }
    return (process.terminationStatus, String(decoding: out, as: UTF8.self), String(decoding: err, as: UTF8.self))
}

/// Starts `executable` (looked up on `PATH`) with `arguments`, ``helperEnvironment`` plus
/// `environment` and no standard input, and returns at once: a long-running program (a
/// monitor) whose standard output goes to the returned file, new in `directory`; its
/// standard error is dropped.
public func startCommand(
    _ executable: String, _ arguments: [String], environment: [String: String] = [:], outputIn directory: URL
) throws -> (Process, URL) {
    let output = directory.appendingPathComponent("out-\(UUID().uuidString)")
    _ = FileManager.default.createFile(atPath: output.path, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: try findExecutable(executable))
    process.arguments = arguments
    process.environment = helperEnvironment.merging(environment) { $1 }
    process.standardOutput = try FileHandle(forWritingTo: output)
    process.standardError = FileHandle.nullDevice
    process.standardInput = FileHandle.nullDevice
    try process.run()
    return (process, output)
}
