import Foundation
import PreferencesProxy
import PrefsdTestSupport

/// Real GLib against the backend: a directory with the test schemas compiled by
/// `glib-compile-schemas`, a module directory holding only the built `libgioprefsd.so`,
/// and the environment that makes `gsettings` and PyGObject use them with prefsd on a
/// private bus (`GSETTINGS_BACKEND=prefsd`, `GIO_EXTRA_MODULES`, `GSETTINGS_SCHEMA_DIR`).
final class GSettingsFixture: Sendable {
    /// The directory holding `schemas/`, `modules/` and `config/`.
    let directory: URL
    /// The session bus the programs see (`nil`: none at all).
    let busAddress: String?
    /// The programs' `XDG_RUNTIME_DIR`: prefsd's, where they find its snapshots (`nil`: none).
    let runtimeDirectory: URL?

    /// The schema with one key per GVariant type family, at `/org/example/Test/`. Beside it,
    /// schemas shaped like a desktop's (a compositor's, a settings daemon plugin's at a
    /// deeper path, a shell's, a file manager's two), so no test needs a desktop installed.
    static let schema = "org.example.Test"
    /// A relocatable schema, used at deep paths.
    static let profileSchema = "org.example.Profile"

    init(busAddress: String?, runtimeDirectory: URL? = nil) throws {
        self.busAddress = busAddress
        self.runtimeDirectory = runtimeDirectory
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-gsettings-\(UUID().uuidString)")
        let schemas = directory.appendingPathComponent("schemas")
        let modules = directory.appendingPathComponent("modules")
        for made in [schemas, modules, directory.appendingPathComponent("config")] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        }
        try Self.schemaXML.write(to: schemas.appendingPathComponent("org.example.Test.gschema.xml"), atomically: true, encoding: .utf8)
        let compiled = try runCommand("glib-compile-schemas", [schemas.path])
        guard compiled.status == 0 else { throw FixtureError("glib-compile-schemas failed: \(compiled.stderr)") }
        try FileManager.default.createSymbolicLink(
            at: modules.appendingPathComponent("libgioprefsd.so"), withDestinationURL: try BuiltGIOModule.url())
    }

    /// A fixture on `service`'s bus.
    convenience init(service: ServiceFixture) throws {
        try self.init(busAddress: service.bus.address, runtimeDirectory: service.runtimeDirectory)
    }

    deinit {
        try? FileManager.default.removeItem(at: directory)
    }

    /// What GLib programs run with: prefsd's backend, the test schemas, the private bus
    /// (or none), and a configuration directory of their own.
    var environment: [String: String] {
        var environment = [
            "GSETTINGS_BACKEND": "prefsd",
            "GIO_EXTRA_MODULES": directory.appendingPathComponent("modules").path,
            "GSETTINGS_SCHEMA_DIR": directory.appendingPathComponent("schemas").path,
            "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "GIO_USE_VFS": "local",
            "DBUS_SESSION_BUS_ADDRESS": busAddress ?? "",
        ]
        if busAddress == nil { environment["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=\(directory.path)/no-bus-here" }
        if let runtimeDirectory { environment["XDG_RUNTIME_DIR"] = runtimeDirectory.path }
        return environment
    }

    /// Runs the `gsettings` command-line tool.
    func gsettings(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        try gsettings(arguments)
    }

    /// Runs the `gsettings` command-line tool with `arguments`.
    func gsettings(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand("gsettings", arguments, environment: environment)
    }

    /// Runs `script` with Debian's python3 and PyGObject (`Gio`, `GLib` imported), with `arguments` as `sys.argv[1:]`.
    func python(_ script: String, _ arguments: [String] = [], timeout: Duration = .seconds(30)) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand("/usr/bin/python3", ["-c", Self.pythonPrelude + script] + arguments, environment: environment, timeout: timeout)
    }

    /// Starts `script` like ``python(_:_:timeout:)``, unbuffered, in the background (see ``start(_:_:)``).
    func startPython(_ script: String) throws -> (Process, URL) {
        try start("/usr/bin/python3", ["-u", "-c", Self.pythonPrelude + script])
    }

    private static let pythonPrelude = "import sys, json\nimport gi\ngi.require_version('Gio', '2.0')\nfrom gi.repository import Gio, GLib\n"

    /// Starts a long-running program (a monitor) with the fixture's environment; its
    /// standard output goes to the returned file.
    func start(_ executable: String, _ arguments: [String]) throws -> (Process, URL) {
        try startCommand(executable, arguments, environment: environment, outputIn: directory)
    }

    /// Starts `script` with Debian's python3 (`arguments` as `sys.argv[1:]`), a stand-in
    /// for the bus that prints `listening` once its socket is bound, and returns once it
    /// has (at most 30 s); its later output goes to the returned file.
    func startListener(_ script: String, _ arguments: [String]) async throws -> (Process, URL) {
        let (process, output) = try start("/usr/bin/python3", ["-u", "-c", script] + arguments)
        let deadline = ContinuousClock.now + .seconds(30)
        while !((try? String(contentsOf: output, encoding: .utf8))?.contains("listening") ?? false) {
            guard process.isRunning, ContinuousClock.now < deadline else {
                kill(process.processIdentifier, SIGKILL)
                throw FixtureError("the stand-in bus did not start listening")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        return (process, output)
    }

    static let schemaXML = """
        <schemalist>
          <enum id="org.example.Color">
            <value nick="red" value="1"/>
            <value nick="green" value="2"/>
          </enum>
          <schema id="org.example.Test" path="/org/example/Test/">
            <key name="text" type="s"><default>'hello'</default></key>
            <key name="flag" type="b"><default>false</default></key>
            <key name="int32" type="i"><default>5</default></key>
            <key name="int64" type="x"><default>6</default></key>
            <key name="int16" type="n"><default>7</default></key>
            <key name="uint16" type="q"><default>8</default></key>
            <key name="uint32" type="u"><default>9</default></key>
            <key name="uint64" type="t"><default>10</default></key>
            <key name="byte" type="y"><default>11</default></key>
            <key name="real" type="d"><default>1.5</default></key>
            <key name="strings" type="as"><default>['a']</default></key>
            <key name="bytes" type="ay"><default>[byte 1]</default></key>
            <key name="dict" type="a{sv}"><default>{}</default></key>
            <key name="names" type="a{ss}"><default>{}</default></key>
            <key name="pair" type="(ii)"><default>(0, 0)</default></key>
            <key name="pairs" type="a(ss)"><default>[]</default></key>
            <key name="maybe" type="ms"><default>nothing</default></key>
            <key name="path" type="o"><default>'/'</default></key>
            <key name="any" type="v"><default>&lt;0&gt;</default></key>
            <key name="color" enum="org.example.Color"><default>'red'</default></key>
            <key name="numbers" type="ai"><default>[]</default></key>
            <key name="nested" type="aas"><default>[]</default></key>
            <key name="when" type="(d)"><default>(0.0,)</default></key>
            <key name="reals" type="ad"><default>[]</default></key>
          </schema>
          <schema id="org.example.Compositor" path="/org/example/Compositor/">
            <key name="experimental-features" type="as"><default>[]</default></key>
            <key name="center-new-windows" type="b"><default>false</default></key>
          </schema>
          <schema id="org.example.Daemon.color" path="/org/example/Daemon/plugins/color/">
            <key name="last-coordinates" type="(dd)"><default>(91.0, 181.0)</default></key>
          </schema>
          <schema id="org.example.Shell" path="/org/example/Shell/">
            <key name="app-picker-layout" type="aa{sv}"><default>[]</default></key>
          </schema>
          <schema id="org.example.Files.preferences" path="/org/example/Files/preferences/">
            <key name="thumbnail-limit" type="t"><default>10485760</default></key>
          </schema>
          <schema id="org.example.Files.window-state" path="/org/example/Files/window-state/">
            <key name="initial-size" type="(ii)"><default>(890, 550)</default></key>
          </schema>
          <schema id="org.example.Profile">
            <key name="font" type="s"><default>'Monospace 10'</default></key>
            <key name="size" type="(uu)"><default>(80, 24)</default></key>
          </schema>
        </schemalist>
        """
}
