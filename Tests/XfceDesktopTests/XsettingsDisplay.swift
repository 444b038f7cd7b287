import DesktopTestSupport
import Foundation
import PrefsdTestSupport
import Synchronization

/// Debian's xfsettingsd publishing XSETTINGS on a display of the test's own (``TestDisplay``),
/// an xfconf client of a private bus where prefsd serves xfconf's name (`prefsd --xfconf`),
/// and Debian's `dump_xsettings` (package xsettingsd) to read back what the display carries:
/// the `_XSETTINGS_SETTINGS` property of the `_XSETTINGS_S0` selection's owner, as every
/// GTK program on the display reads it.
final class XsettingsDisplay: Sendable {
    let service: ServiceFixture
    let display: TestDisplay
    private let settingsDaemon = Mutex<Process?>(nil)

    /// The programs the test runs; a missing one fails it with this advice.
    static let tools = ["/usr/bin/xfsettingsd", "/usr/bin/xfconf-query", "/usr/bin/dump_xsettings"]

    /// Starts prefsd with `--xfconf` on a private bus and waits until it owns xfconf's name,
    /// then the display; throws, saying what to install, when a program is missing.
    init() async throws {
        for tool in Self.tools where !FileManager.default.isExecutableFile(atPath: tool) {
            throw FixtureError("\(tool) is missing: run scripts/install-dependencies test (xfce4-settings, xfconf, xsettingsd)")
        }
        let service = try await ServiceFixture(arguments: ["--xfconf"])
        let owned = try await eventually(timeout: .seconds(30)) {
            service.bus.processID(owning: "org.xfce.Xfconf") != nil
        }
        if !owned { throw FixtureError("prefsd did not own org.xfce.Xfconf; its log ends: \(service.log.suffix(2000))") }
        self.service = service
        display = try TestDisplay()
        for made in ["home", "config", "cache", "data"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(made), withIntermediateDirectories: true)
        }
    }

    deinit {
        // xfsettingsd goes before its display (ended when `display` is released). A process
        // started from a test's thread may have SIGTERM blocked: end it for sure.
        if let process = settingsDaemon.withLock({ $0 }) {
            kill(process.processIdentifier, SIGKILL)
            _ = waitForExit(of: process)
        }
    }

    /// The desktop programs' own files: their home and XDG folders, never the user's.
    var directory: URL { service.bus.directory.appendingPathComponent("desktop") }

    /// The display, the private bus as the session bus, prefsd's `XDG_CONFIG_HOME` and
    /// `XDG_CONFIG_DIRS`, and a home of their own; no session manager, no accessibility bridge.
    var environment: [String: String] {
        display.environment.merging([
            "DBUS_SESSION_BUS_ADDRESS": service.bus.address, "NO_AT_BRIDGE": "1",
            "HOME": directory.appendingPathComponent("home").path,
            "XDG_CONFIG_HOME": service.bus.directory.appendingPathComponent("config").path,
            "XDG_CONFIG_DIRS": service.systemConfigDirectory.path,
            "XDG_CACHE_HOME": directory.appendingPathComponent("cache").path,
            "XDG_DATA_HOME": directory.appendingPathComponent("data").path,
        ]) { $1 }
    }

    /// Starts xfsettingsd on the display (not waiting for a window manager, outside a
    /// session) and waits until it owns the display's XSETTINGS selection.
    func startSettingsDaemon() async throws {
        let (process, _) = try startCommand(
            "/usr/bin/xfsettingsd", ["--no-daemon", "--disable-wm-check", "--sm-client-disable"],
            environment: environment, outputIn: directory)
        settingsDaemon.withLock { $0 = process }
        _ = try await waitForSettings { _ in true }
    }

    /// The display's XSETTINGS by name, each value as `dump_xsettings` prints it (a string
    /// in double quotes), or `nil` while no program owns the XSETTINGS selection.
    func settings() throws -> [String: String]? {
        let dump = try runCommand("/usr/bin/dump_xsettings", [], environment: environment)
        guard dump.status == 0 else { return nil }
        var settings: [String: String] = [:]
        for line in dump.stdout.split(separator: "\n") {
            guard let space = line.firstIndex(of: " ") else { continue }
            settings[String(line[..<space])] = String(line[line.index(after: space)...])
        }
        return settings
    }

    /// Reads the display's XSETTINGS every 50 ms until `condition` holds of them, and
    /// returns them; throws, with what the display last carried and xfsettingsd's state,
    /// when it does not within 30 s (a bound for a stalled machine).
    @discardableResult
    func waitForSettings(_ condition: ([String: String]) -> Bool) async throws -> [String: String] {
        let deadline = ContinuousClock.now + .seconds(30)
        var last: [String: String]?
        repeat {
            last = try settings()
            if let last, condition(last) { return last }
            if let process = settingsDaemon.withLock({ $0 }), !process.isRunning {
                throw FixtureError("xfsettingsd exited with status \(process.terminationStatus)")
            }
            try await Task.sleep(for: .milliseconds(50))
        } while ContinuousClock.now < deadline
        let shown = last.map { $0.sorted { $0.key < $1.key }.map { "\($0.key) \($0.value)" }.joined(separator: "\n") }
        throw FixtureError("the display's XSETTINGS did not change as expected within 30 s; they are:\n\(shown ?? "(no owner of _XSETTINGS_S0)")")
    }

    /// Runs Debian's `xfconf-query` with `arguments` on the private bus.
    func query(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand("/usr/bin/xfconf-query", arguments, environment: environment)
    }
}
