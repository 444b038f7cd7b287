import DesktopTestSupport
import Foundation
import PreferencesModel
import PrefsdTestSupport
import Synchronization

/// The Settings app in a test: a display and accessibility bus of its own (`TestDisplay`),
/// the app on the fixture's private bus, the example bundle in a private XDG data directory,
/// and the AT-SPI driver to work the window with.
final class SettingsWindowSession: Sendable {
    let fixture: ServiceFixture
    let dataHome: URL
    let display: TestDisplay
    private let app = Mutex<Process?>(nil)

    static let exampleBundle = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/settings/com.example.Editor")

    init(fixture: ServiceFixture) throws {
        display = try TestDisplay()
        self.fixture = fixture
        dataHome = fixture.bus.directory.appendingPathComponent("data")
        let settings = dataHome.appendingPathComponent("prefsd/settings")
        try FileManager.default.createDirectory(at: settings, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.exampleBundle, to: settings.appendingPathComponent("com.example.Editor"))
    }

    deinit {
        // The app goes before its display (ended when `display` is released).
        quit()
    }

    /// The environment of the app, the driver and prefs: the fixture's bus, the display.
    var environment: [String: String] {
        display.environment.merging([
            "DBUS_SESSION_BUS_ADDRESS": fixture.bus.address, "GSK_RENDERER": "cairo", "GTK_USE_PORTAL": "0",
            "XDG_DATA_HOME": dataHome.path, "XDG_DATA_DIRS": "/usr/local/share:/usr/share",
            "XDG_CONFIG_HOME": fixture.bus.directory.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": fixture.bus.directory.path,
        ]) { $1 }
    }

    /// Starts the Settings app showing `domain`, with `extra` added to its environment.
    func launch(_ domain: String, extra: [String: String] = [:]) throws {
        quit()
        let process = Process()
        process.executableURL = ServiceFixture.executable("prefs-settings")
        process.arguments = [domain]
        process.environment = helperEnvironment.merging(environment) { $1 }.merging(extra) { $1 }.filter { !$0.value.isEmpty }
        process.standardOutput = FileHandle.nullDevice
        let log = fixture.bus.directory.appendingPathComponent("settings-app.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        try process.run()
        app.withLock { $0 = process }
    }

    /// The app's standard error so far (its warnings and the errors it showed).
    var appLog: String {
        (try? String(contentsOf: fixture.bus.directory.appendingPathComponent("settings-app.log"), encoding: .utf8)) ?? ""
    }

    /// Stops the app with SIGTERM (it quits on it), or SIGKILL after 10 s.
    func quit() {
        guard
            let process = app.withLock({ current -> Process? in
                defer { current = nil }; return current
            })
        else { return }
        guard process.isRunning else { return }
        process.terminate()
        let deadline = Date().addingTimeInterval(10)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        _ = waitForExit(of: process)
    }

    /// Runs one step of the AT-SPI driver; the step's output says what it saw.
    func drive(_ arguments: [String]) throws -> (succeeded: Bool, output: String) {
        try AccessibilityDriver(application: "prefs-settings", display: display, environment: environment).drive(arguments)
    }

    /// Runs `prefs` on the fixture's bus.
    func prefs(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand(ServiceFixture.executable("prefs").path, arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": fixture.bus.address])
    }

    /// Waits until `prefs read DOMAIN KEY` prints `expected` (at most 20 s); returns the last output.
    func waitForStored(_ domain: String, _ key: String, _ expected: String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(20)
        var last = ""
        while ContinuousClock.now < deadline {
            let result = try prefs(["read", domain, key])
            last = result.status == 0 ? result.stdout.trimmingCharacters(in: .newlines) : "exit \(result.status): \(result.stderr)"
            if last == expected { return last }
            try await Task.sleep(for: .milliseconds(50))
        }
        return last
    }
}
