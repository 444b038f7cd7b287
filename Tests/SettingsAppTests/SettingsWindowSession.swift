import Foundation
import PreferencesModel
import PrefsdTestSupport
import Synchronization

/// The Settings app in a test: an Xvfb display, an accessibility bus of its own, the app on
/// the fixture's private bus, the example bundle in a private XDG data directory, and the
/// AT-SPI driver script to work the window with.
final class SettingsWindowSession: Sendable {
    let fixture: ServiceFixture
    let dataHome: URL
    let display: String
    private let xvfb: Process
    private let accessibilityBus: PrivateBus
    private let app = Mutex<Process?>(nil)

    /// Where the test looks for its tools; a missing one fails the test with this advice.
    static let tools = ["/usr/bin/Xvfb", "/usr/libexec/at-spi2-registryd", "/usr/bin/python3"]
    static let driver = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("atspi-driver.py").path
    static let exampleBundle = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples/settings/com.example.Editor")

    init(fixture: ServiceFixture) throws {
        for tool in Self.tools where !FileManager.default.isExecutableFile(atPath: tool) {
            throw FixtureError("\(tool) is missing: run scripts/install-dependencies (xvfb, at-spi2-core, python3-pyatspi)")
        }
        let check = try runCommand("/usr/bin/python3", ["-c", "import pyatspi"])
        guard check.status == 0 else {
            throw FixtureError("python3 cannot import pyatspi (install python3-pyatspi): \(check.stderr)")
        }
        self.fixture = fixture
        dataHome = fixture.bus.directory.appendingPathComponent("data")
        let settings = dataHome.appendingPathComponent("prefsd/settings")
        try FileManager.default.createDirectory(at: settings, withIntermediateDirectories: true)
        try FileManager.default.copyItem(at: Self.exampleBundle, to: settings.appendingPathComponent("com.example.Editor"))

        // An accessibility bus of the test's own (AT_SPI_BUS_ADDRESS), starting the AT-SPI
        // registry when the app first registers, as at-spi-bus-launcher's bus does.
        // The registry finds its bus through AT_SPI_BUS_ADDRESS, like the app and the driver.
        accessibilityBus = try PrivateBus()
        let registry = """
            [D-BUS Service]
            Name=org.a11y.atspi.Registry
            Exec=/usr/bin/env AT_SPI_BUS_ADDRESS=\(accessibilityBus.address) /usr/libexec/at-spi2-registryd

            """
        try registry.write(
            to: accessibilityBus.serviceDirectory.appendingPathComponent("org.a11y.atspi.Registry.service"),
            atomically: true, encoding: .utf8)

        // Xvfb picks a free display and writes its number to standard output when ready.
        let process = Process()
        process.environment = helperEnvironment
        process.executableURL = URL(fileURLWithPath: "/usr/bin/Xvfb")
        process.arguments = ["-displayfd", "1", "-nolisten", "tcp", "-screen", "0", "1280x800x24"]
        let output = Pipe()
        process.standardOutput = output
        process.standardError = FileHandle.nullDevice
        try process.run()
        xvfb = process
        let number = Mutex<String?>(nil)
        let ready = DispatchSemaphore(value: 0)
        DispatchQueue.global().async {
            var text = ""
            while !text.contains("\n") {
                let chunk = output.fileHandleForReading.availableData
                if chunk.isEmpty { break }
                text += String(decoding: chunk, as: UTF8.self)
            }
            number.withLock { $0 = text.trimmingCharacters(in: .whitespacesAndNewlines) }
            ready.signal()
        }
        guard ready.wait(timeout: .now() + 30) == .success, let value = number.withLock({ $0 }), !value.isEmpty else {
            kill(process.processIdentifier, SIGKILL)
            accessibilityBus.stop()
            throw FixtureError("Xvfb did not start a display within 30 s")
        }
        display = ":" + value
    }

    deinit {
        quit()
        // A process started from a test's thread may have SIGTERM blocked: end the display for sure.
        kill(xvfb.processIdentifier, SIGKILL)
        _ = waitForExit(of: xvfb)
        // The registry outlives its bus: end it too.
        if let registry = accessibilityBus.processID(owning: "org.a11y.atspi.Registry") { kill(registry, SIGKILL) }
        accessibilityBus.stop()
    }

    /// The environment of the app, the driver and prefs: the fixture's bus, the display.
    var environment: [String: String] {
        [
            "DBUS_SESSION_BUS_ADDRESS": fixture.bus.address, "DISPLAY": display, "GDK_BACKEND": "x11",
            "GSK_RENDERER": "cairo", "GTK_USE_PORTAL": "0", "NO_AT_BRIDGE": "0", "LANG": "C.UTF-8", "LANGUAGE": "",
            "XDG_DATA_HOME": dataHome.path, "XDG_DATA_DIRS": "/usr/local/share:/usr/share",
            "XDG_CONFIG_HOME": fixture.bus.directory.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": fixture.bus.directory.path, "AT_SPI_BUS_ADDRESS": accessibilityBus.address,
        ]
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
        let result = try runCommand(
            "/usr/bin/python3", [Self.driver] + arguments,
            environment: environment.filter { !$0.value.isEmpty }, timeout: .seconds(60))
        return (result.status == 0, result.stdout + result.stderr)
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
