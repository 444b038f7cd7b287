import Foundation
import PrefsdTestSupport
import Testing

/// `prefs gsettings` reads what `gsettings` reads: every verb that prints, for every key of
/// every schema installed, byte for byte, with values stored every way a value reaches
/// prefsd (gsettings on prefsd's module, `prefs gsettings set`, `prefs write` of values a
/// schema refuses or fixes up).
@Suite("prefs gsettings reads as gsettings does", .serialized)
struct GSettingsReadingTests {
    /// Where each relocatable schema is read in the comparisons.
    static func place(of schema: String) -> String {
        "/org/example/at/" + schema.replacingOccurrences(of: ".", with: "-") + "/"
    }

    /// Stores values through each writer, so that `get` compares values and not only defaults.
    private func storeValues(_ fixture: GSettingsCommandFixture) throws {
        // Through Debian's gsettings on prefsd's module.
        let viaGSettings: [(key: String, value: String)] = [
            ("text", "'set by gsettings'"), ("flag", "true"), ("int32", "-7"), ("uint32", "42"), ("strings", "['x', 'y']"),
            ("pair", "(1, -2)"), ("maybe", "just 'x'"), ("color", "green"), ("days", "['mon', 'wed']"), ("real", "-0.25"),
            ("any", "<(1, 'a')>"), ("dict", "{'k': <1>}"),
        ]
        for (key, value) in viaGSettings {
            let set = try fixture.gsettings("set", "org.example.Test", key, value)
            #expect(set.status == 0, "gsettings set \(key) \(value): \(set.stderr)")
        }
        #expect(try fixture.gsettings("set", "org.example.Profile:/org/example/Test/profile/", "font", "'Mono 12'").status == 0)
        // Through prefs gsettings.
        let folder = "org.gnome.desktop.app-folders.folder:" + Self.place(of: "org.gnome.desktop.app-folders.folder")
        let viaPrefs: [[String]] = [
            ["org.example.Test", "int64", "-9000000000"], ["org.example.Test", "names", "{'a': 'b'}"],
            ["org.example.Test.window", "width", "1024"], ["org.gnome.desktop.session", "idle-delay", "600"],
            ["org.gnome.desktop.interface", "color-scheme", "prefer-dark"], ["org.gnome.desktop.peripherals.mouse", "speed", "-0.5"],
            ["org.gnome.desktop.interface", "gtk-theme", "Adwaita-dark"],
            [folder, "name", "'Utilities'"],
        ]
        for arguments in viaPrefs {
            let set = try fixture.prefs(["gsettings", "set"] + arguments)
            #expect(set.status == 0, "prefs gsettings set \(arguments): \(set.stderr)")
        }
        // Raw values a schema refuses (GSettings reads the default) or fixes up (an alias).
        let raw: [[String]] = [
            ["org.example.Test", "uint16", "-int", "-1"], ["org.example.Test", "int16", "-string", "seven"],
            ["org.example.Test", "byte", "-int", "300"], ["org.example.Test", "size", "-string", "medium"],
            ["org.example.Test", "color", "-string", "crimson"], ["org.example.Test", "uint64", "-string", "@t 18446744073709551615"],
            ["org.gnome.desktop", "wm/preferences/action-double-click-titlebar", "-string", "toggle_maximize"],
            ["org.gnome.desktop", "interface/cursor-size", "-string", "big"],
        ]
        for arguments in raw {
            let write = try fixture.prefs(["write"] + arguments)
            #expect(write.status == 0, "prefs write \(arguments): \(write.stderr)")
        }
    }

    @Test("get, range and describe of every key, list-keys, list-children and list-recursively of every schema: what gsettings prints")
    func everyKeyOfEverySchema() async throws {
        let fixture = try await GSettingsCommandFixture()
        try storeValues(fixture)
        let fixed = try fixture.gsettings("list-schemas").stdout.split(separator: "\n").map(String.init)
        let relocatable = try fixture.gsettings("list-relocatable-schemas").stdout.split(separator: "\n").map(String.init)
        #expect(fixed.contains("org.example.Test"))
        #expect(fixed.contains("org.gnome.desktop.interface"))
        #expect(relocatable.contains("org.example.Profile"))
        var lines: [[String]] = [["list-schemas"], ["list-schemas", "--print-paths"], ["list-relocatable-schemas"], ["list-recursively"]]
        var keys = 0
        for schema in fixed + relocatable {
            let named = relocatable.contains(schema) ? schema + ":" + Self.place(of: schema) : schema
            lines += [["list-keys", schema], ["list-children", named], ["list-recursively", named]]
            for key in try fixture.gsettings("list-keys", schema).stdout.split(separator: "\n").map(String.init) {
                lines += [["get", named, key], ["range", schema, key], ["describe", schema, key]]
                keys += 1
            }
        }
        #expect(keys > 150, "the schemas installed have \(keys) keys")
        let (ran, differences) = try fixture.compare(lines)
        #expect(ran == lines.count)
        #expect(differences.isEmpty, "\(differences.count) of \(lines.count) command lines differ:\n\(differences.prefix(20).joined(separator: "\n"))")
        // The stored values are what GSettings reads: defaults where the schema refuses them,
        // the alias's nick, values of every writer.
        let listed = try fixture.prefsGSettings("list-recursively", "org.example.Test").stdout
        let expectedLines: [String] = [
            "org.example.Test uint16 uint16 8", "org.example.Test color 'red'", "org.example.Test size 'small'",
            "org.example.Test int64 int64 -9000000000", "org.example.Test text 'set by gsettings'", "org.example.Test.window width 1024",
            "org.example.Profile font 'Mono 12'",
        ]
        for line in expectedLines {
            #expect(listed.contains(line + "\n"), "\(line) in\n\(listed)")
        }
        let alias = try fixture.prefsGSettings("get", "org.gnome.desktop.wm.preferences", "action-double-click-titlebar").stdout
        #expect(alias == "'toggle-maximize'\n")
    }

    @Test("list-recursively and list-keys of every schema installed on this machine: what gsettings prints")
    func machineSchemas() async throws {
        let fixture = try await GSettingsCommandFixture()
        // The machine's schema directories, not the test's.
        let machine: [String: String] = ["XDG_DATA_DIRS": "/usr/local/share:/usr/share"]
        let schemas = try fixture.gsettings("list-schemas", environment: machine).stdout.split(separator: "\n").map(String.init)
        #expect(schemas.contains("org.gnome.desktop.interface"), "gsettings-desktop-schemas is installed")
        let lines: [[String]] = [["list-recursively"], ["list-relocatable-schemas"]] + schemas.map { ["list-keys", $0] }
        let (ran, differences) = try fixture.compare(lines, environment: machine)
        #expect(ran == lines.count)
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
    }

    @Test("wrong command lines: gsettings' messages (its usage naming prefs gsettings) and exit statuses")
    func wrongCommandLines() async throws {
        let fixture = try await GSettingsCommandFixture()
        let folder = "org.gnome.desktop.app-folders.folder"
        let lines: [[String]] = [
            [], ["help"], ["help", "get"], ["help", "nope"], ["nope"], ["get"], ["get", "org.example.Test"],
            ["get", "org.example.Test", "text", "extra"], ["list-schemas", "extra"], ["list-recursively", "a", "b"], ["monitor"],
            ["get", "", "text"], ["get", "no.such.schema", "text"], ["get", "org.example.Test", "nokey"],
            ["get", "org.example.Test:/org/example/x/", "text"], ["get", folder, "name"], ["get", folder + ":", "name"],
            ["get", folder + ":x/", "name"], ["get", folder + ":/x", "name"], ["get", folder + "://x/", "name"],
            ["list-keys", folder], ["range", folder, "name"], ["describe", "org.example.Test", "int32"],
            ["set", "org.example.Test", "uint32", "-5"], ["set", "org.example.Test", "uint32", "5000"],
            ["set", "org.example.Test", "uint32", "abc"], ["set", "org.example.Test", "text", "'unterminated"],
            ["set", "org.example.Test", "color", "purple"], ["set", "org.example.Test", "days", "['fri']"],
            ["set", "org.example.Test", "size", "medium"], ["set", "org.example.Test", "pair", "(1,"],
            ["--schemadir", "/nonexistent", "get", "org.example.Test", "text"], ["--schemadir", "/nonexistent"], ["--version"],
        ]
        let (ran, differences) = try fixture.compare(lines, ownName: true)
        #expect(ran == lines.count)
        #expect(differences.isEmpty, "\(differences.joined(separator: "\n"))")
        // Refused values change nothing.
        #expect(try fixture.prefs(["read", "org.example.Test", "uint32"]).status == 1)
    }
}
