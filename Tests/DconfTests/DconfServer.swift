import Dconf
import Foundation
import PrefsdTestSupport

/// A private bus where dconf's name can be served by prefsd (`prefsd --dconf`) or, when
/// prefsd does not serve it, activated as Debian's `dconf-service`; both use the test's own
/// `XDG_CONFIG_HOME` and `XDG_RUNTIME_DIR`, so the user's real dconf is never touched. The
/// `dconf` command and GSettings run with the same directories and a profile of the user
/// database alone.
final class DconfServer: Sendable {
    let service: ServiceFixture

    /// Starts prefsd with `--dconf` (unless `startingPrefsd` is off) and waits until it
    /// serves dconf's name.
    init(startingPrefsd: Bool = true, arguments: [String] = []) async throws {
        service = try ServiceFixture(activatable: ())
        try FileManager.default.createDirectory(at: configHome.appendingPathComponent("dconf"), withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: service.runtimeDirectory, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try "user-db:user\n".write(to: profile, atomically: true, encoding: .utf8)
        let dconfService = """
            [D-BUS Service]
            Name=\(DconfBus.busName)
            Exec=/usr/bin/env XDG_CONFIG_HOME=\(configHome.path) XDG_RUNTIME_DIR=\(service.runtimeDirectory.path) /usr/libexec/dconf-service
            """
        try dconfService.write(to: service.bus.serviceDirectory.appendingPathComponent("\(DconfBus.busName).service"), atomically: true, encoding: .utf8)
        guard FileManager.default.isExecutableFile(atPath: "/usr/libexec/dconf-service") else {
            throw FixtureError("Debian's dconf-service is not installed (/usr/libexec/dconf-service); run scripts/install-dependencies")
        }
        if startingPrefsd { try await startPrefsd(arguments: arguments) }
    }

    deinit {
        stopDconfService()
    }

    /// prefsd's and dconf's `XDG_CONFIG_HOME` (the fixture's).
    var configHome: URL { service.bus.directory.appendingPathComponent("config") }
    /// dconf's user database file.
    var databaseFile: URL { configHome.appendingPathComponent("dconf/user") }
    /// The dconf profile the tools use: the user database alone.
    var profile: URL { service.bus.directory.appendingPathComponent("dconf-profile") }

    /// The environment of dconf's clients.
    var environment: [String: String] {
        [
            "DBUS_SESSION_BUS_ADDRESS": service.bus.address,
            "XDG_CONFIG_HOME": configHome.path,
            "XDG_RUNTIME_DIR": service.runtimeDirectory.path,
            "DCONF_PROFILE": profile.path,
        ]
    }

    /// Starts prefsd with `--dconf` and waits until it owns dconf's name.
    func startPrefsd(arguments: [String] = []) async throws {
        try await service.startService(arguments: ["--dconf"] + arguments)
        try await waitUntilServingDconf()
    }

    /// Waits (at most 30 s) until the prefsd started last owns dconf's name.
    func waitUntilServingDconf() async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let owner = service.bus.processID(owning: DconfBus.busName), owner == service.pid { return }
            guard service.isRunning else { throw FixtureError("prefsd exited before owning \(DconfBus.busName): \(service.log.suffix(2000))") }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw FixtureError("prefsd did not own \(DconfBus.busName) within 30 s: \(service.log.suffix(2000))")
    }

    /// Ends the `dconf-service` the bus activated, if one runs.
    func stopDconfService() {
        guard let pid = service.bus.processID(owning: DconfBus.busName), pid != service.pid else { return }
        kill(pid, SIGKILL)
        // Wait until the bus has seen it go, so the next call activates anew.
        for _ in 0..<500 where service.bus.processID(owning: DconfBus.busName) == pid { usleep(10_000) }
    }

    /// Runs `dconf` (Debian's `dconf-cli`), with `input` as its standard input when given.
    func dconf(_ arguments: [String], input: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        guard let input else { return try runCommand("dconf", arguments, environment: environment) }
        let file = service.bus.directory.appendingPathComponent("stdin-\(UUID().uuidString)")
        try input.write(to: file, atomically: true, encoding: .utf8)
        return try runCommand("/bin/sh", ["-c", "exec dconf \"$@\" < \"\(file.path)\"", "dconf"] + arguments, environment: environment)
    }

    /// `dconf read KEY`, trimmed; fails the caller's expectation through the status.
    func read(_ key: String) throws -> String {
        try dconf(["read", key]).stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs the built `prefs` on the fixture's bus.
    func prefs(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand(ServiceFixture.prefsBinary.path, arguments, environment: environment)
    }

    /// The values of dconf's user database file, as dconf's engine reads them.
    func databaseValues() throws -> [String: DconfValue] {
        try DconfMirror.values(inFile: [UInt8](Data(contentsOf: databaseFile)))
    }
}
