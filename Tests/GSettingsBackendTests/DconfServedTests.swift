import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// GSettings on its stock dconf backend (Debian's `dconf-gsettings-backend`, no
/// `GSETTINGS_BACKEND=prefsd`) against prefsd serving dconf's name (`prefsd --dconf`).
@Suite("GSettings' own dconf backend against prefsd as dconf-service", .serialized)
struct DconfServedTests {
    /// prefsd serving dconf on a private bus, and the environment of a GSettings program on
    /// dconf's module that shares prefsd's configuration and runtime directories.
    struct Served {
        let service: ServiceFixture
        let settings: GSettingsFixture
        let environment: [String: String]

        init() async throws {
            service = try await ServiceFixture(arguments: ["--dconf"])
            let deadline = ContinuousClock.now + .seconds(30)
            while service.bus.processID(owning: "ca.desrt.dconf") != service.pid, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(20))
            }
            guard service.bus.processID(owning: "ca.desrt.dconf") == service.pid else {
                throw FixtureError("prefsd did not take ca.desrt.dconf: \(service.log.suffix(2000))")
            }
            settings = try GSettingsFixture(service: service)
            let module = try DconfFixture(settings: settings, service: service)
            let profile = settings.directory.appendingPathComponent("dconf-profile")
            try "user-db:user\n".write(to: profile, atomically: true, encoding: .utf8)
            environment = module.environment.merging([
                "XDG_CONFIG_HOME": service.bus.directory.appendingPathComponent("config").path,
                "XDG_RUNTIME_DIR": service.runtimeDirectory.path,
                "DCONF_PROFILE": profile.path,
            ]) { $1 }
        }

        func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try runCommand(tool == "prefs" ? ServiceFixture.prefsBinary.path : tool, arguments, environment: environment)
        }

        /// Runs a PyGObject script (`Gio` and `GLib` imported) on dconf's module.
        func python(_ script: String) throws -> (status: Int32, stdout: String, stderr: String) {
            try run("/usr/bin/python3", ["-c", Self.prelude + script])
        }

        /// Starts a PyGObject script in the background, its output going to a file.
        func startPython(_ script: String) throws -> (Process, URL) {
            let output = settings.directory.appendingPathComponent("out-\(UUID().uuidString)")
            _ = FileManager.default.createFile(atPath: output.path, contents: nil)
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments = ["-c", "exec /usr/bin/python3 -u -c \"$1\" > \"$0\" 2>&1 < /dev/null", output.path, Self.prelude + script]
            process.environment = helperEnvironment.merging(environment) { $1 }
            process.standardInput = FileHandle.nullDevice
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.run()
            return (process, output)
        }

        static let prelude = "import sys\nimport gi\ngi.require_version('Gio', '2.0')\nfrom gi.repository import Gio, GLib\n"

        /// A PyGObject program on dconf's module, running in the background.
        struct Watcher {
            let process: Process
            /// Where it prints `changed KEY VALUE` for each change its settings hear.
            let output: URL

            func stop() {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }

        /// Starts a program that follows the settings of `schemas` (a value printed with its
        /// type when `typed`), once it has read each of them.
        func watch(_ schemas: [String], typed: Bool) async throws -> Watcher {
            let (process, output) = try startPython(
                """
                def changed(settings, key):
                    print('changed', key, settings.get_value(key).print_(\(typed ? "True" : "False")), flush=True)
                watched = [Gio.Settings.new(name) for name in [\(schemas.map { "'\($0)'" }.joined(separator: ", "))]]
                for settings in watched:
                    settings.connect('changed', changed)
                    for key in settings.props.settings_schema.list_keys():
                        settings.get_value(key)
                print('ready', flush=True)
                GLib.MainLoop().run()
                """)
            let watcher = Watcher(process: process, output: output)
            do {
                try await waitFor("ready", in: output)
            } catch {
                watcher.stop()
                throw error
            }
            return watcher
        }
    }

    @Test("gsettings set and get through dconf's module: the same lines as under dconf-service, the values in prefsd, prefsd's writes seen by GSettings")
    func sameAsDconfService() async throws {
        // The reference: Debian's dconf-service.
        let reference = try await ServiceFixture()
        let referenceSettings = try GSettingsFixture(service: reference)
        let dconf = try DconfFixture(settings: referenceSettings, service: reference)
        defer { dconf.stop() }
        let expected = try DconfMigrationTests.filled(dconf, referenceSettings)

        let served = try await Served()
        for value in DconfMigrationTests.values {
            let set = try served.run("gsettings", ["set", value.schema, value.key, value.text])
            #expect(set.status == 0, "gsettings set \(value.schema) \(value.key) \(value.text): \(set.stderr)")
        }
        let listed = try DconfMigrationTests.listing { try served.run("gsettings", $0) }
        for schema in DconfMigrationTests.schemas {
            #expect(listed[schema] == expected[schema], "\(schema)\nprefsd:\n\(listed[schema] ?? "")\ndconf-service:\n\(expected[schema] ?? "")")
        }

        // A write through prefsd's own interface reaches dconf's clients with its `Notify`,
        // off the write's answer: a program on dconf's module that saw the `Notify` hears it
        // through its changed signal, and a program started after that reads the new value.
        let watcher = try await served.watch(["org.gnome.desktop.interface", "org.gnome.desktop.session"], typed: true)
        defer { watcher.stop() }
        let output = watcher.output
        #expect(try served.run("prefs", ["read", "org.gnome.desktop", "interface/cursor-size"]).stdout == "33\n")
        #expect(try served.run("prefs", ["write", "org.gnome.desktop", "interface/cursor-size", "-int", "48"]).status == 0)
        try await waitFor("changed cursor-size 48", in: output)
        #expect(try served.run("gsettings", ["get", "org.gnome.desktop.interface", "cursor-size"]).stdout == "48\n")
        #expect(try served.run("prefs", ["write", "org.gnome.desktop", "session/idle-delay", "-int", "900"]).status == 0)
        try await waitFor("changed idle-delay uint32 900", in: output)
        #expect(try served.run("gsettings", ["get", "org.gnome.desktop.session", "idle-delay"]).stdout == "uint32 900\n")
    }

    @Test("delay-apply is one change; a GSettings program's changed signal fires for another's writes and for prefsd's; writers at once all land")
    func changesAndWriters() async throws {
        let served = try await Served()
        let watcher = try await served.watch(["org.example.Test"], typed: false)
        defer { watcher.stop() }
        let output = watcher.output

        let applied = try served.python(
            """
            s = Gio.Settings.new('org.example.Test')
            s.delay()
            s.set_string('text', 'delayed')
            s.set_int('int32', 12)
            s.apply()
            Gio.Settings.sync()
            """)
        #expect(applied.status == 0, "\(applied.stderr)")
        try await waitFor("changed text 'delayed'", in: output)
        try await waitFor("changed int32 12", in: output)
        #expect(try served.run("prefs", ["read", "org.example.Test", "text"]).stdout == "delayed\n")
        let history = try served.run("prefs", ["history", "org.example.Test"]).stdout
        #expect(history.split(separator: "\n").filter { $0.contains("python") }.count == 2, "the Apply is one change of two keys:\n\(history)")

        #expect(try served.run("prefs", ["write", "org.example.Test", "text", "-string", "from prefs"]).status == 0)
        try await waitFor("changed text 'from prefs'", in: output)

        // Eight dconf writers at once, each its own process and key.
        let writers = (0..<8).map { index in
            Task.detached { try served.run("dconf", ["write", "/org/example/Test/extra\(index)", "\(index)"]) }
        }
        for writer in writers { #expect(try await writer.value.status == 0) }
        for index in 0..<8 {
            #expect(try served.run("dconf", ["read", "/org/example/Test/extra\(index)"]).stdout == "\(index)\n")
        }
    }
}
