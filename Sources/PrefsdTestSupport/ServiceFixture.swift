@_exported import BusTestSupport
import DBus
import Foundation
import PreferencesProtocol
import Synchronization

/// A private bus, a temporary store directory and a `prefsd` serving them, started fresh
/// for one test: nothing touches the real session bus or `~/.config`.
public final class ServiceFixture: Sendable {
    public let bus: PrivateBus
    public let storeDirectory: URL
    /// prefsd's `XDG_RUNTIME_DIR` (where it keeps the snapshots GSettings programs map):
    /// the test's own, inside the bus's directory unless a test shares one between buses.
    public let runtimeDirectory: URL
    private let process = Mutex<Process?>(nil)

    /// Starts a bus and a prefsd on it, and waits until prefsd owns its name.
    public init(arguments: [String] = [], runtimeDirectory: URL? = nil) async throws {
        bus = try PrivateBus()
        storeDirectory = bus.directory.appendingPathComponent("store", isDirectory: true)
        self.runtimeDirectory = runtimeDirectory ?? bus.directory.appendingPathComponent("runtime", isDirectory: true)
        try await startService(arguments: arguments)
    }

    deinit {
        killService()
        bus.stop()
    }

    /// The built `prefsd` beside the test bundle, or `$PREFSD_BINARY`.
    public static var binary: URL {
        if let path = ProcessInfo.processInfo.environment["PREFSD_BINARY"] {
            return URL(fileURLWithPath: path)
        }
        return executable("prefsd")
    }

    /// A built executable of the package, found beside the test bundle.
    public static func executable(_ name: String) -> URL {
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = me.deletingLastPathComponent()
        // The test bundle may be a directory (`….xctest/…`) or a file beside the executables.
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent(name).path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent(name)
    }

    /// A bus on which prefsd is not running but can be activated: the bus starts it, with
    /// this fixture's store, on the first call to its name.
    public init(activatable: Void) throws {
        bus = try PrivateBus()
        storeDirectory = bus.directory.appendingPathComponent("store", isDirectory: true)
        runtimeDirectory = bus.directory.appendingPathComponent("runtime", isDirectory: true)
        let service = """
            [D-BUS Service]
            Name=\(PreferencesBus.busName)
            Exec=\(Self.binary.path) --store \(storeDirectory.path) --log-level warning \(administratorArguments.joined(separator: " "))

            """
        try service.write(
            to: bus.serviceDirectory.appendingPathComponent("\(PreferencesBus.busName).service"),
            atomically: true, encoding: .utf8
        )
    }

    /// Starts prefsd (again) on the fixture's bus and store: given the bus as `address`
    /// spells it (the bus's own spelling by default), and without `XDG_RUNTIME_DIR` (so
    /// keeping no snapshots) when `withoutRuntimeDirectory`.
    public func startService(
        arguments: [String] = [], waitForName: Bool = true, address: String? = nil, withoutRuntimeDirectory: Bool = false
    ) async throws {
        let process = Process()
        process.executableURL = Self.binary
        process.arguments =
            ["--address", address ?? bus.address, "--store", storeDirectory.path, "--log-level", "warning"]
            + administratorArguments + arguments
        var environment = helperEnvironment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        environment["XDG_CONFIG_HOME"] = bus.directory.appendingPathComponent("config").path
        // The administrator's configuration folders (xfconf's channel files among them): the
        // fixture's, empty unless a test puts files there, never the machine's /etc/xdg.
        environment["XDG_CONFIG_DIRS"] = systemConfigDirectory.path
        try FileManager.default.createDirectory(at: runtimeDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        environment["XDG_RUNTIME_DIR"] = withoutRuntimeDirectory ? nil : runtimeDirectory.path
        // prefsd reads the settings bundles of the XDG data directories at start (which keys
        // are `IsSecure`): the fixture's own, empty unless a test puts bundles there or
        // passes `--settings-dir`, never the machine's.
        let data = bus.directory.appendingPathComponent("data").path
        environment["XDG_DATA_HOME"] = data
        environment["XDG_DATA_DIRS"] = data
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        if !FileManager.default.fileExists(atPath: logFile.path) {
            _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        }
        let log = try FileHandle(forWritingTo: logFile)
        log.seekToEndOfFile()
        process.standardError = log
        // prefsd has its own copy once started: ours is closed, or every start would keep a
        // descriptor open in the test process (past ~1,000, Foundation's Process.run reads
        // out of bounds listing them: swift-corelibs-foundation PR #5472).
        defer { try? log.close() }
        try process.run()
        self.process.withLock { $0 = process }
        if waitForName { try await waitUntilOwned() }
    }

    /// The one folder of prefsd's `$XDG_CONFIG_DIRS` (where xfconf's administrator channel
    /// files go, under `xfce4/xfconf/xfce-perchannel-xml`).
    public var systemConfigDirectory: URL { bus.directory.appendingPathComponent("system-config", isDirectory: true) }

    /// The administrator's defaults directory, dconf profile and dconf database directory
    /// prefsd reads unless a test passes its own (`--defaults-dir`, `--dconf-profile`,
    /// `--dconf-db-dir`): the fixture's, absent unless a test makes them, so the machine's
    /// `/etc/prefsd/defaults`, `$DCONF_PROFILE`, `/etc/dconf/profile/user` and
    /// `/etc/dconf/db` never leak into a test.
    public var administratorDirectory: URL { Self.administratorDirectory(in: bus.directory) }

    /// The arguments that point prefsd at ``administratorDirectory``; a test that starts
    /// prefsd itself passes them too.
    public var administratorArguments: [String] { Self.administratorArguments(in: bus.directory) }

    /// The administrator's directory of a test's own `directory`.
    public static func administratorDirectory(in directory: URL) -> URL {
        directory.appendingPathComponent("admin", isDirectory: true)
    }

    /// The arguments that point prefsd at the administrator's directory of `directory`.
    public static func administratorArguments(in directory: URL) -> [String] {
        let admin = administratorDirectory(in: directory)
        return [
            "--defaults-dir", admin.appendingPathComponent("defaults").path,
            "--dconf-profile", admin.appendingPathComponent("profile").path,
            "--dconf-db-dir", admin.appendingPathComponent("db").path,
        ]
    }

    /// Where prefsd's log (its standard error) goes.
    public var logFile: URL { bus.directory.appendingPathComponent("prefsd.log") }

    /// What prefsd has logged so far.
    public var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// The pid of the prefsd this fixture started last (set even after it exited: see ``isRunning``).
    public var pid: Int32? { process.withLock { $0?.processIdentifier } }

    /// Whether the prefsd this fixture started is still running (an exited one is reaped, so
    /// unlike `kill(pid, 0)` this is false for a prefsd that crashed and is a zombie).
    public var isRunning: Bool { process.withLock { $0?.isRunning ?? false } }

    /// Waits until some connection owns the service's bus names.
    ///
    /// prefsd takes its main name first and the sandbox door's name right after: both are
    /// waited for, so a test that calls the door at once never finds its name missing.
    public func waitUntilOwned(timeout: Duration = .seconds(60)) async throws {
        let client = try connect()
        defer { client.close() }
        let deadline = ContinuousClock.now + timeout
        func owned(_ name: String) async throws -> Bool {
            let reply = try await client.call(
                .methodCall(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "NameHasOwner", body: [.string(name)]
                ))
            return reply.body.first == .boolean(true)
        }
        while ContinuousClock.now < deadline {
            if try await owned(PreferencesBus.busName), try await owned(SandboxBus.busName) { return }
            if let process = process.withLock({ $0 }), !process.isRunning {
                throw FixtureError("prefsd exited with status \(process.terminationStatus) before owning its name")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw FixtureError("prefsd did not own \(PreferencesBus.busName) and \(SandboxBus.busName) within \(timeout); its log ends: \(log.suffix(2000))")
    }

    /// Sends `signal` to prefsd and waits for it to exit; returns its exit status, or `nil`
    /// when it had to be killed after not exiting within 20 seconds.
    @discardableResult
    public func stopService(signal number: Int32 = SIGTERM) -> Int32? {
        guard
            let process = process.withLock({ current -> Process? in
                defer { current = nil }
                return current
            })
        else { return nil }
        return stop(process, signal: number)
    }

    /// Waits for prefsd to exit by itself; returns its exit status, or `nil` if it still
    /// runs after `timeout`.
    public func waitForExit(timeout: Duration = .seconds(20)) async -> Int32? {
        guard let process = process.withLock({ $0 }) else { return nil }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(20))
        }
        guard !process.isRunning else { return nil }
        self.process.withLock { $0 = nil }
        return process.terminationStatus
    }

    /// Kills prefsd with SIGKILL, as a crash would.
    public func killService() {
        stopService(signal: SIGKILL)
    }

    /// A new client connection to the fixture's bus.
    public func connect() throws -> DBusConnection {
        try DBusConnection.connect(address: bus.address)
    }

    /// Runs a command-line tool with the fixture's bus as the session bus.
    public func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand(tool, arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
    }
}

/// A fixture that could not do what a test needs.
public struct FixtureError: Error, CustomStringConvertible {
    public let description: String
    public init(_ description: String) { self.description = description }
}

/// A value shared between tasks under a lock.
public final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    public init(_ value: Value) { mutex = Mutex(value) }

    public func withLock<Result: Sendable>(_ body: (inout Value) -> Result) -> Result {
        mutex.withLock { body(&$0) }
    }
}
