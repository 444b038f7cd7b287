import Foundation
import PreferencesProtocol
import PrefsdTestSupport

/// A Flatpak-like sandbox for one test, made with bubblewrap: a fresh root holding the
/// system read-only, the package's built executables, a `/.flatpak-info` naming
/// `applicationID`, and xdg-dbus-proxy (`--filter --talk=io.github.prefsd.Sandboxed1`)
/// started inside it, so that prefsd sees the proxy as its peer and finds the file in the
/// proxy's root, as with Flatpak. Programs run inside talk to the bus only through it.
struct FlatpakSandbox {
    let fixture: ServiceFixture
    let applicationID: String
    /// Holds the `.flatpak-info` file given to the sandbox.
    let directory: URL
    /// The names the proxy lets the application talk to (Flatpak's `--talk-name`).
    var talkNames = [SandboxBus.busName]
    /// What is bound at `/.flatpak-info` inside.
    var infoFile: URL { directory.appendingPathComponent("flatpak-info") }

    init(fixture: ServiceFixture, applicationID: String) throws {
        self.fixture = fixture
        self.applicationID = applicationID
        directory = fixture.bus.directory.appendingPathComponent("sandbox-\(applicationID)", isDirectory: true)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try "[Application]\nname=\(applicationID)\nruntime=runtime/org.example.Platform/x86_64/1\n\n[Instance]\ninstance-id=1\n"
            .write(to: infoFile, atomically: true, encoding: .utf8)
    }

    /// A sandbox whose `/.flatpak-info` is a FIFO nobody writes, as a process with its own
    /// root (an unprivileged user namespace, a container) can make it.
    init(fixture: ServiceFixture, fifoNamed name: String) throws {
        try self.init(fixture: fixture, applicationID: name)
        try FileManager.default.removeItem(at: infoFile)
        guard mkfifo(infoFile.path, 0o600) == 0 else { throw FixtureError("mkfifo \(infoFile.path): \(String(cString: strerror(errno)))") }
    }

    /// Where the proxy listens inside the sandbox.
    static let proxySocket = "/run/flatpak/bus"

    /// The script run inside: starts xdg-dbus-proxy on the real bus ($1), letting the
    /// application talk to `names`, waits for its socket, runs the rest of the arguments
    /// with it as the session bus, and stops it.
    private static func script(talkingTo names: [String]) -> String {
        """
        proxy_bus="$1"; shift
        xdg-dbus-proxy "$proxy_bus" \(proxySocket) --filter \(names.map { "--talk=\($0)" }.joined(separator: " ")) &
        proxy=$!
        tries=0
        while [ ! -S \(proxySocket) ]; do
          tries=$((tries + 1))
          if [ "$tries" -gt 1000 ]; then echo "xdg-dbus-proxy did not create its socket" >&2; exit 97; fi
          sleep 0.01
        done
        DBUS_SESSION_BUS_ADDRESS=unix:path=\(proxySocket) "$@"
        status=$?
        kill "$proxy"
        exit "$status"
        """
    }

    /// The command line that runs `arguments` inside the sandbox: behind xdg-dbus-proxy, as
    /// Flatpak runs an application, or (`throughProxy: false`) on the bus's socket itself.
    func commandLine(_ arguments: [String], throughProxy: Bool = true) throws -> [String] {
        _ = try findExecutable("xdg-dbus-proxy")
        var bwrap = ["--die-with-parent", "--unshare-pid", "--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        for path in ["/usr", "/etc", "/opt"] where FileManager.default.fileExists(atPath: path) {
            bwrap += ["--ro-bind", path, path]
        }
        for path in ["/bin", "/sbin", "/lib", "/lib64"] {
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                bwrap += ["--symlink", target, path]
            } else if FileManager.default.fileExists(atPath: path) {
                bwrap += ["--ro-bind", path, path]
            }
        }
        let executables = ServiceFixture.prefsBinary.deletingLastPathComponent().path
        bwrap += [
            "--ro-bind", executables, executables,
            "--ro-bind", fixture.bus.directory.path, fixture.bus.directory.path,
            "--dir", "/run/flatpak",
            "--ro-bind", infoFile.path, FlatpakInfo.path,
            "--setenv", "HOME", "/tmp",
        ]
        guard throughProxy else {
            return bwrap + ["--setenv", "DBUS_SESSION_BUS_ADDRESS", fixture.bus.address] + arguments
        }
        bwrap += [
            "--unsetenv", "DBUS_SESSION_BUS_ADDRESS",
            "/bin/sh", "-c", Self.script(talkingTo: talkNames), "sh", fixture.bus.address,
        ]
        return bwrap + arguments
    }

    /// Runs the built `prefs` inside the sandbox.
    func prefs(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        try prefs(arguments)
    }

    /// Runs the built `prefs` inside the sandbox with `arguments`.
    func prefs(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand("bwrap", try commandLine([ServiceFixture.prefsBinary.path] + arguments))
    }

    /// Starts a long-running program inside the sandbox; its standard output is collected
    /// line by line.
    func start(_ arguments: [String]) throws -> SandboxedProcess {
        try SandboxedProcess(try findExecutable("bwrap"), try commandLine(arguments))
    }
}

/// A program running in a sandbox, with the lines it printed so far. Its output goes to
/// files, read when asked: no handler runs on a dispatch source while the program is killed.
final class SandboxedProcess: Sendable {
    private let process: Process
    /// Where its standard output and standard error go.
    private let directory: URL
    private var outputFile: URL { directory.appendingPathComponent("stdout") }
    private var errorFile: URL { directory.appendingPathComponent("stderr") }

    init(_ executable: String, _ arguments: [String]) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("sandboxed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let process = Process()
        process.environment = helperEnvironment
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        for file in [directory.appendingPathComponent("stdout"), directory.appendingPathComponent("stderr")] {
            _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        }
        process.standardOutput = try FileHandle(forWritingTo: directory.appendingPathComponent("stdout"))
        process.standardError = try FileHandle(forWritingTo: directory.appendingPathComponent("stderr"))
        process.standardInput = FileHandle.nullDevice
        self.process = process
        try process.run()
    }

    deinit {
        stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// The complete lines printed so far.
    var lines: [String] {
        var pieces = ((try? String(contentsOf: outputFile, encoding: .utf8)) ?? "").components(separatedBy: "\n")
        pieces.removeLast()
        return pieces
    }

    /// What it printed on standard error so far.
    var standardError: String { (try? String(contentsOf: errorFile, encoding: .utf8)) ?? "" }

    /// Waits until a printed line satisfies `condition` (at most `timeout`, a bound for a
    /// stalled machine, not a measure of speed).
    func waitForLine(timeout: Duration = .seconds(30), _ condition: (String) -> Bool) async throws {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if lines.contains(where: condition) { return }
            if !process.isRunning, !lines.contains(where: condition) {
                try? await Task.sleep(for: .milliseconds(50))  // let the last output arrive
                if lines.contains(where: condition) { return }
                throw FixtureError(
                    "the sandboxed program exited (\(process.terminationStatus)) without printing the line awaited; it printed \(lines) and on standard error: \(standardError)"
                )
            }
            try await Task.sleep(for: .milliseconds(10))
        }
        throw FixtureError("the line awaited did not come within \(timeout); printed: \(lines), standard error: \(standardError)")
    }

    /// Kills the sandbox (its PID namespace ends with it).
    func stop() {
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = waitForExit(of: process)
    }
}
