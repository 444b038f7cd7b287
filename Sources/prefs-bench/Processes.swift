import Foundation
import ProcessMemory
import Synchronization

/// Errors of the benchmark's own setup.
struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Monotonic time in seconds (CLOCK_MONOTONIC: comparable between processes on this machine).
@inline(__always) func now() -> Double {
    var spec = timespec()
    clock_gettime(CLOCK_MONOTONIC, &spec)
    return Double(spec.tv_sec) + Double(spec.tv_nsec) * 1e-9
}

/// A fresh directory under /tmp.
func makeTemporaryDirectory(_ prefix: String) throws -> URL {
    var template = Array("/tmp/\(prefix)-XXXXXX".utf8CString)
    guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw BenchError("mkdtemp failed: errno \(errno)")
    }
    return URL(fileURLWithPath: String(cString: made), isDirectory: true)
}

/// A child process whose standard output is read line by line (with a time bound) and whose
/// standard error goes to a log file; with `input`, lines can be written to its standard
/// input (else it reads /dev/null). Stopped with SIGTERM, then SIGKILL after a grace time.
final class Child: Sendable {
    let process: Process
    let logFile: URL
    private let output: FileHandle
    private let input: FileHandle?
    private let buffer = Mutex<[UInt8]>([])

    var pid: Int32 { process.processIdentifier }

    init(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil, log: URL,
        input: Bool = false
    ) throws {
        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        let pipe = Pipe()
        process.standardOutput = pipe
        if input {
            let inputPipe = Pipe()
            process.standardInput = inputPipe
            self.input = inputPipe.fileHandleForWriting
        } else {
            process.standardInput = FileHandle.nullDevice
            self.input = nil
        }
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        logFile = log
        output = pipe.fileHandleForReading
        try process.run()
    }

    /// The next line of standard output, or nil when none arrives within `timeout` seconds or
    /// the output ends.
    func readLine(timeout: Double) -> String? {
        let deadline = now() + timeout
        let fd = output.fileDescriptor
        while true {
            let line = buffer.withLock { buffer -> String? in
                guard let newline = buffer.firstIndex(of: UInt8(ascii: "\n")) else { return nil }
                let text = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return text
            }
            if let line { return line }
            let left = deadline - now()
            if left <= 0 { return nil }
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&poller, 1, Int32(min(left * 1000, 1000)) + 1)
            if ready < 0 && errno != EINTR { return nil }
            if ready > 0 {
                var chunk = [UInt8](repeating: 0, count: 4096)
                let count = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress, 4096) }
                if count <= 0 { return nil }
                buffer.withLock { $0 += chunk[..<count] }
            }
        }
    }

    /// Writes `line` and a newline to the child's standard input (made with `input: true`).
    func writeLine(_ line: String) throws {
        guard let input else { throw BenchError("\(process.executableURL?.lastPathComponent ?? "the child") has no input pipe") }
        try input.write(contentsOf: Data((line + "\n").utf8))
    }

    /// Closes the child's standard input (made with `input: true`), gives it up to `grace`
    /// seconds to exit on its own, then ``stop(grace:)``. Idempotent.
    func finish(grace: Double = 5) {
        try? input?.close()
        let deadline = now() + grace
        while process.isRunning && now() < deadline { usleep(2000) }
        stop()
    }

    /// What the child wrote on standard error, or a sentence saying where to look when nothing.
    var standardErrorText: String {
        let text = (try? String(contentsOf: logFile, encoding: .utf8)) ?? ""
        return text.isEmpty ? "no message (see \(logFile.path))" : text.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// SIGTERM, up to `grace` seconds to exit, then SIGKILL; waits for the exit. Idempotent.
    func stop(grace: Double = 5) {
        guard process.isRunning else { return }
        kill(pid, SIGTERM)
        let deadline = now() + grace
        while process.isRunning && now() < deadline { usleep(2000) }
        if process.isRunning { kill(pid, SIGKILL) }
        process.waitUntilExit()
    }

    /// `VmHWM` (peak resident set) from /proc/PID/status, in bytes.
    func peakResidentBytes() -> Int? {
        procStatus("/proc/\(pid)/status").flatMap { procStatusNumber("VmHWM", in: $0) }.map { $0 * 1024 }
    }
}

/// The text of the /proc status file at `path` (a process's or a thread's), or nil when it
/// is gone.
func procStatus(_ path: String) -> String? {
    ProcessMemory.readProcFile(path).map { String(decoding: $0, as: UTF8.self) }
}

/// The number a line of a /proc status file gives `field` (`VmHWM:\t  1234 kB` gives 1234),
/// or nil when no line does.
func procStatusNumber(_ field: String, in status: String) -> Int? {
    for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
        return line.dropFirst(field.count + 1).split(whereSeparator: { $0 == " " || $0 == "\t" }).first.flatMap { Int($0) }
    }
    return nil
}

/// Runs `executable` with `arguments` to its end, its standard output into the file at
/// `output`: the seconds from spawn to exit and what it printed.
func spawnTimed(
    _ executable: String, _ arguments: [String], environment: [String: String], output: String
) throws -> (seconds: Double, output: String) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let start = now()
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
    guard spawned == 0 else { throw BenchError("could not start \(executable): errno \(spawned)") }
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 {
        guard errno == EINTR else { throw BenchError("waitpid failed: errno \(errno)") }
    }
    let seconds = now() - start
    let printed = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
    guard status == 0 else { throw BenchError("\(executable) \(arguments.joined(separator: " ")) exited with status \(status)") }
    return (seconds, printed)
}
