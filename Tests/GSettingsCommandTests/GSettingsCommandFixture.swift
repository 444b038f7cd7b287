import Foundation
import PrefsdTestSupport

/// `prefs gsettings` beside Debian's `gsettings`, both seeing the same prefsd (on the test's
/// private bus) and the same schemas: the test's own and a copy of some of
/// gsettings-desktop-schemas, compiled by `glib-compile-schemas` into a data directory of
/// the test's (`XDG_DATA_DIRS`), so "every schema installed" is a list the test knows.
/// `gsettings` reads prefsd through prefsd's GIO module (`GSETTINGS_BACKEND=prefsd`,
/// `GIO_EXTRA_MODULES`); `prefs` through the bus alone.
final class GSettingsCommandFixture: Sendable {
    /// prefsd and its bus.
    let service: ServiceFixture
    /// The directory holding `data/`, `modules/`, `config/` and the comparisons' outputs.
    let directory: URL

    /// The files of gsettings-desktop-schemas copied in (enums, an override file, schemas with
    /// children, relocatable ones and aliases among them).
    static let desktopSchemaFiles = [
        "org.gnome.desktop.enums.xml", "10_gsettings-desktop-schemas.gschema.override",
        "org.gnome.desktop.interface.gschema.xml", "org.gnome.desktop.session.gschema.xml",
        "org.gnome.desktop.wm.preferences.gschema.xml", "org.gnome.desktop.app-folders.gschema.xml",
        "org.gnome.desktop.peripherals.gschema.xml", "org.gnome.desktop.privacy.gschema.xml",
    ]

    /// Where Debian's gsettings-desktop-schemas puts them.
    static let installedSchemas = URL(fileURLWithPath: "/usr/share/glib-2.0/schemas")

    /// Starts prefsd with `arguments` on a bus of its own and installs the schemas.
    init(prefsdArguments: [String] = []) async throws {
        service = try await ServiceFixture(arguments: prefsdArguments)
        directory = service.bus.directory.appendingPathComponent("gsettings-command")
        let schemas = directory.appendingPathComponent("data/glib-2.0/schemas")
        let modules = directory.appendingPathComponent("modules")
        for made in [schemas, modules, directory.appendingPathComponent("config"), directory.appendingPathComponent("compared")] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        }
        for name in Self.desktopSchemaFiles {
            let source = Self.installedSchemas.appendingPathComponent(name)
            guard FileManager.default.fileExists(atPath: source.path) else {
                throw FixtureError("\(source.path) is missing: install gsettings-desktop-schemas (scripts/install-dependencies)")
            }
            try FileManager.default.copyItem(at: source, to: schemas.appendingPathComponent(name))
        }
        try Self.schemaXML.write(to: schemas.appendingPathComponent("org.example.Test.gschema.xml"), atomically: true, encoding: .utf8)
        let compiled = try runCommand("glib-compile-schemas", ["--strict", schemas.path])
        guard compiled.status == 0 else { throw FixtureError("glib-compile-schemas failed: \(compiled.stderr)") }
        try FileManager.default.createSymbolicLink(at: modules.appendingPathComponent("libgioprefsd.so"), withDestinationURL: try BuiltGIOModule.url())
    }

    /// What both programs run with: the test's schemas alone, prefsd's GIO module, the
    /// private bus and prefsd's runtime directory, a configuration directory of their own,
    /// English messages.
    var environment: [String: String] {
        [
            "GSETTINGS_BACKEND": "prefsd",
            "GIO_EXTRA_MODULES": directory.appendingPathComponent("modules").path,
            "XDG_DATA_DIRS": directory.appendingPathComponent("data").path,
            "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": service.runtimeDirectory.path,
            "DBUS_SESSION_BUS_ADDRESS": service.bus.address,
            "LC_ALL": "C.UTF-8",
        ]
    }

    /// Runs Debian's `gsettings` with `arguments`.
    func gsettings(_ arguments: String..., environment extra: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand("gsettings", arguments, environment: environment.merging(extra) { $1 })
    }

    /// Runs `prefs gsettings` with `arguments`.
    func prefsGSettings(_ arguments: String..., environment extra: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        try prefs(["gsettings"] + arguments, environment: extra)
    }

    /// Runs `prefs` with `arguments`.
    func prefs(_ arguments: [String], environment extra: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand(ServiceFixture.prefsBinary.path, arguments, environment: environment.merging(extra) { $1 })
    }

    /// Starts `executable` with `arguments` and the fixture's environment in the
    /// background (a monitor); its standard output goes to the returned file.
    func start(_ executable: String, _ arguments: [String]) throws -> (Process, URL) {
        try startCommand(executable, arguments, environment: environment, outputIn: directory)
    }

    /// Runs each of `commandLines` with `gsettings` and with `prefs gsettings`, in one shell
    /// (spawning from the test process costs more than the programs), and compares standard
    /// output, standard error and exit status byte for byte. Returns how many command lines
    /// ran and a description of each that differed. With `ownName`, `prefs gsettings` in
    /// prefs's output reads as `gsettings` (its usage texts name it so).
    func compare(_ commandLines: [[String]], environment extra: [String: String] = [:], ownName: Bool = false) throws -> (ran: Int, differences: [String]) {
        let outputs = directory.appendingPathComponent("compared/\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: outputs, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: outputs) }
        var script = """
            out=$1; prefs=$2
            run() { n=$1; shift
              gsettings "$@" >"$out/g$n.1" 2>"$out/g$n.2"; echo $? >"$out/g$n.s"
              "$prefs" gsettings "$@" >"$out/p$n.1" 2>"$out/p$n.2"; echo $? >"$out/p$n.s"
              echo "$n" >>"$out/ran"
            }

            """
        for (index, line) in commandLines.enumerated() {
            script += "run \(index) " + line.map(Self.quoted).joined(separator: " ") + "\n"
        }
        let file = outputs.appendingPathComponent("compare.sh")
        try script.write(to: file, atomically: true, encoding: .utf8)
        let result = try runCommand(
            "/bin/sh", [file.path, outputs.path, ServiceFixture.prefsBinary.path], environment: environment.merging(extra) { $1 }, timeout: .seconds(600))
        guard result.status == 0 else { throw FixtureError("the comparison script failed: \(result.stderr)") }
        let ran = ((try? String(contentsOf: outputs.appendingPathComponent("ran"), encoding: .utf8)) ?? "").split(separator: "\n").count
        var differences: [String] = []
        for (index, line) in commandLines.enumerated() {
            for (part, name) in [("1", "standard output"), ("2", "standard error"), ("s", "exit status")] {
                let theirs = try Data(contentsOf: outputs.appendingPathComponent("g\(index).\(part)"))
                var ours = try Data(contentsOf: outputs.appendingPathComponent("p\(index).\(part)"))
                if ownName { ours = Data(String(decoding: ours, as: UTF8.self).replacingOccurrences(of: "prefs gsettings", with: "gsettings").utf8) }
                if theirs != ours {
                    differences.append(
                        "\(line.joined(separator: " ")): \(name) differs:\n  gsettings: \(String(decoding: theirs, as: UTF8.self).debugDescription)\n  prefs:     \(String(decoding: ours, as: UTF8.self).debugDescription)"
                    )
                }
            }
        }
        return (ran, differences)
    }

    /// `text` quoted for the shell.
    static func quoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }

    /// The test's schemas: a key of each GVariant type family, a range, choices, an enum
    /// with an alias, flags, summaries and descriptions present and absent, a fixed child
    /// and a relocatable one.
    static let schemaXML = """
        <schemalist>
          <enum id="org.example.Color">
            <value nick="red" value="1"/>
            <value nick="green" value="2"/>
          </enum>
          <flags id="org.example.Days">
            <value nick="mon" value="1"/>
            <value nick="tue" value="2"/>
            <value nick="wed" value="4"/>
          </flags>
          <schema id="org.example.Test" path="/org/example/Test/">
            <key name="text" type="s"><default>'hello'</default><summary>Some text</summary><description>Any text at all.</description></key>
            <key name="flag" type="b"><default>false</default><summary>A flag</summary></key>
            <key name="int32" type="i"><default>5</default></key>
            <key name="int64" type="x"><default>6</default></key>
            <key name="int16" type="n"><default>7</default></key>
            <key name="uint16" type="q"><default>8</default></key>
            <key name="uint32" type="u"><range min="1" max="1000"/><default>9</default></key>
            <key name="uint64" type="t"><default>10</default></key>
            <key name="byte" type="y"><default>11</default></key>
            <key name="real" type="d"><range min="-1.0" max="1.0"/><default>0.5</default></key>
            <key name="strings" type="as"><default>['a']</default></key>
            <key name="bytes" type="ay"><default>[byte 1]</default></key>
            <key name="dict" type="a{sv}"><default>{}</default></key>
            <key name="names" type="a{ss}"><default>{}</default></key>
            <key name="pair" type="(ii)"><default>(0, 0)</default></key>
            <key name="maybe" type="ms"><default>nothing</default></key>
            <key name="path" type="o"><default>'/'</default></key>
            <key name="any" type="v"><default>&lt;0&gt;</default></key>
            <key name="size" type="s"><choices><choice value="small"/><choice value="large"/></choices><default>'small'</default></key>
            <key name="color" enum="org.example.Color"><aliases><alias value="crimson" target="red"/></aliases><default>'red'</default></key>
            <key name="days" flags="org.example.Days"><default>['mon']</default></key>
            <child name="window" schema="org.example.Test.window"/>
            <child name="profile" schema="org.example.Profile"/>
          </schema>
          <schema id="org.example.Test.window" path="/org/example/Test/window/">
            <key name="width" type="i"><default>640</default></key>
          </schema>
          <schema id="org.example.Profile">
            <key name="font" type="s"><default>'Monospace 10'</default></key>
            <key name="size" type="(uu)"><default>(80, 24)</default></key>
          </schema>
        </schemalist>
        """
}
