import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// `prefs dconf-import` and `prefs dconf-export` against Debian's real dconf, with the
/// installed schemas of gsettings-desktop-schemas and the test schemas.
@Suite("prefs dconf-import and dconf-export with a real dconf", .serialized)
struct DconfMigrationTests {
    /// Non-default values of every type family, set in dconf through `gsettings set`.
    static let values: [(schema: String, key: String, text: String)] = [
        ("org.gnome.desktop.interface", "cursor-size", "33"),
        ("org.gnome.desktop.interface", "gtk-theme", "' lead\\nline2 \\\\ é = #x [y]'"),
        ("org.gnome.desktop.interface", "color-scheme", "'prefer-dark'"),
        ("org.gnome.desktop.interface", "text-scaling-factor", "1.25"),
        ("org.gnome.desktop.interface", "clock-show-seconds", "true"),
        ("org.gnome.desktop.session", "idle-delay", "uint32 600"),
        ("org.gnome.desktop.input-sources", "sources", "[('xkb', 'us'), ('xkb', 'de')]"),
        ("org.gnome.desktop.input-sources", "xkb-options", "['caps:none', 'compose:ralt']"),
        ("org.example.Compositor", "experimental-features", "['scale-monitor-framebuffer', 'rt-scheduler']"),
        ("org.example.Daemon.color", "last-coordinates", "(48.5, -2.25)"),
        ("org.example.Shell", "app-picker-layout", "[{'b': <{'position': <1>}>, 'a': <{'position': <0>}>}]"),
        ("org.example.Files.preferences", "thumbnail-limit", "uint64 100"),
        ("org.example.Files.window-state", "initial-size", "(1024, 768)"),
        (GSettingsFixture.schema, "int64", "int64 -9000000000"),
        (GSettingsFixture.schema, "uint64", "uint64 18446744073709551615"),
        (GSettingsFixture.schema, "byte", "byte 0xff"),
        (GSettingsFixture.schema, "int16", "int16 -3"),
        (GSettingsFixture.schema, "uint16", "uint16 65535"),
        (GSettingsFixture.schema, "bytes", "[byte 0x00, 0x0a]"),
        (GSettingsFixture.schema, "dict", "{'z': <'s'>, 'a': <int32 1>}"),
        (GSettingsFixture.schema, "names", "{'k': 'v', 'a': 'b'}"),
        (GSettingsFixture.schema, "maybe", "just 'x'"),
        (GSettingsFixture.schema, "path", "'/org/example/x'"),
        (GSettingsFixture.schema, "any", "<(1, 'two')>"),
        (GSettingsFixture.schema, "nested", "[['a'], [], ['b', 'c']]"),
        (GSettingsFixture.schema, "color", "'green'"),
        (GSettingsFixture.schema, "when", "(nan,)"),
        (GSettingsFixture.schema, "reals", "[inf, -0.0, 2.5]"),
        ("\(GSettingsFixture.profileSchema):/org/example/terminal/profiles:/:b1dcc9dd-5262/", "font", "'Mono 12'"),
        ("\(GSettingsFixture.profileSchema):/org/example/terminal/profiles:/:b1dcc9dd-5262/", "size", "(100, 30)"),
    ]

    /// The schemas compared (every one a value is set in).
    static var schemas: [String] {
        var seen: [String] = []
        for value in values where !seen.contains(value.schema) { seen.append(value.schema) }
        return seen
    }

    /// `gsettings list-recursively SCHEMA` of every compared schema, through `run`.
    static func listing(_ run: ([String]) throws -> (status: Int32, stdout: String, stderr: String)) throws -> [String: String] {
        var listing: [String: String] = [:]
        for schema in schemas {
            let result = try run(["list-recursively", schema])
            #expect(result.status == 0, "list-recursively \(schema): \(result.stderr)")
            listing[schema] = result.stdout
        }
        return listing
    }

    /// A filled dconf; each value differs from its default there.
    static func filled(_ dconf: DconfFixture, _ fixture: GSettingsFixture) throws -> [String: String] {
        let defaults = try listing { try fixture.gsettings($0) }
        for value in values {
            let set = try dconf.gsettings(["set", value.schema, value.key, value.text])
            #expect(set.status == 0, "gsettings set \(value.schema) \(value.key) \(value.text): \(set.stderr)")
        }
        let filled = try listing { try dconf.gsettings($0) }
        for value in values {
            let line = "\(value.schema.split(separator: ":").first ?? "") \(value.key) "
            let before = defaults[value.schema]?.split(separator: "\n").first { $0.hasPrefix(line) }
            let after = filled[value.schema]?.split(separator: "\n").first { $0.hasPrefix(line) }
            #expect(after != nil && before != after, "\(value.schema) \(value.key) is not set in dconf: \(String(describing: after))")
        }
        return filled
    }

    @Test("dconf-import: gsettings list-recursively prints the same lines under prefsd as under dconf; a second import changes nothing")
    func importMatchesDconf() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let dconf = try DconfFixture(settings: fixture, service: service)
        defer { dconf.stop() }
        let expected = try Self.filled(dconf, fixture)

        let dryRun = try dconf.prefs(["dconf-import", "--dry-run"])
        #expect(dryRun.status == 0, "\(dryRun.stderr)")
        #expect(dryRun.stdout.contains("org.gnome.desktop: would set 8 of 8 keys (0 already in prefsd)"), "\(dryRun.stdout)")
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        #expect(try await proxy.perform(PreferencesCall.domains()).isEmpty, "--dry-run wrote")

        let imported = try dconf.prefs(["dconf-import"])
        #expect(imported.status == 0, "\(imported.stderr)")
        #expect(imported.stdout.contains("org.gnome.desktop: set 8 of 8 keys (0 already in prefsd)"), "\(imported.stdout)")
        #expect(imported.stdout.contains("org.example.terminal: set 2 of 2 keys"), "\(imported.stdout)")

        let underPrefsd = try Self.listing { try fixture.gsettings($0) }
        for schema in Self.schemas {
            #expect(underPrefsd[schema] == expected[schema], "\(schema)\nprefsd:\n\(underPrefsd[schema] ?? "")\ndconf:\n\(expected[schema] ?? "")")
        }

        let again = try dconf.prefs(["dconf-import"])
        #expect(
            again.status == 0 && !again.stdout.contains(": set ") && again.stdout.contains("org.gnome.desktop: 8 keys, all already in prefsd"),
            "\(again.stdout)")
    }

    @Test("dconf-export, then dconf load into an emptied dconf: the same lines again")
    func exportLoadsIntoDconf() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let dconf = try DconfFixture(settings: fixture, service: service)
        defer { dconf.stop() }
        let expected = try Self.filled(dconf, fixture)
        #expect(try dconf.prefs(["dconf-import"]).status == 0)

        let exported = try dconf.prefs(["dconf-export"])
        #expect(exported.status == 0 && exported.stderr.isEmpty, "\(exported.stderr)")
        #expect(try dconf.dconf(["reset", "-f", "/"]).status == 0)
        #expect(try dconf.dconf(["dump", "/"]).stdout.isEmpty)
        let loaded = try dconf.dconf(["load", "/"], input: exported.stdout)
        #expect(loaded.status == 0, "dconf load: \(loaded.stderr)\n\(exported.stdout)")
        let reloaded = try Self.listing { try dconf.gsettings($0) }
        for schema in Self.schemas {
            #expect(reloaded[schema] == expected[schema], "\(schema)\nreloaded:\n\(reloaded[schema] ?? "")\nbefore:\n\(expected[schema] ?? "")")
        }

        // A subtree: only the keys below it, relative to it.
        let subtree = try dconf.prefs(["dconf-export", "/org/gnome/desktop/session/"])
        #expect(subtree.stdout == "[/]\nidle-delay=uint32 600\n", "\(subtree.stdout)")
    }

    @Test("dconf-import PATH copies that subtree only, from dconf dump PATH or a saved dump of it")
    func subtree() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let dconf = try DconfFixture(settings: fixture, service: service)
        defer { dconf.stop() }
        #expect(try dconf.gsettings(["set", "org.gnome.desktop.interface", "cursor-size", "40"]).status == 0)
        #expect(try dconf.gsettings(["set", "org.example.Compositor", "center-new-windows", "true"]).status == 0)
        let imported = try dconf.prefs(["dconf-import", "/org/gnome/desktop/interface/"])
        #expect(imported.status == 0 && imported.stdout == "org.gnome.desktop: set 1 of 1 key (0 already in prefsd)\n", "\(imported.stdout) \(imported.stderr)")
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        #expect(try await proxy.perform(PreferencesCall.domains()) == ["org.gnome.desktop"])
        #expect(try await proxy.read("org.gnome.desktop", "interface/cursor-size") == .integer(40))

        let file = fixture.directory.appendingPathComponent("compositor.ini")
        try dconf.dconf(["dump", "/org/example/Compositor/"]).stdout.write(to: file, atomically: true, encoding: .utf8)
        let fromFile = try dconf.prefs(["dconf-import", "--from", file.path, "/org/example/Compositor/"])
        #expect(
            fromFile.status == 0 && fromFile.stdout == "org.example.Compositor: set 1 of 1 key (0 already in prefsd)\n", "\(fromFile.stdout) \(fromFile.stderr)"
        )
        #expect(try fixture.gsettings(["get", "org.example.Compositor", "center-new-windows"]).stdout == "true\n")
    }

    @Test("a dconf value of another type than the schema's (GSettings reads the default) is left out and named")
    func mistypedValueLeftOut() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let dconf = try DconfFixture(settings: fixture, service: service)
        defer { dconf.stop() }
        #expect(try dconf.dconf(["write", "/org/gnome/desktop/session/idle-delay", "600"]).status == 0)
        #expect(try dconf.dconf(["write", "/org/gnome/desktop/session/session-name", "'mine'"]).status == 0)
        let underDconf = try dconf.gsettings(["list-recursively", "org.gnome.desktop.session"]).stdout
        #expect(underDconf.contains("idle-delay uint32 300\n") && underDconf.contains("session-name 'mine'\n"), "\(underDconf)")
        let imported = try dconf.prefs(["dconf-import"])
        #expect(imported.status == 0 && imported.stdout == "org.gnome.desktop: set 1 of 1 key (0 already in prefsd)\n", "\(imported.stdout)")
        #expect(
            imported.stderr.contains("/org/gnome/desktop/session/idle-delay left out: dconf holds a value of type i where its schema declares u"),
            "\(imported.stderr)")
        #expect(try fixture.gsettings(["list-recursively", "org.gnome.desktop.session"]).stdout == underDconf)
    }

    @Test("dconf-export writes only what a schema describes: not NSGlobalDomain, not an application's own domain; it counts what it left out")
    func exportLeavesOutUndescribed() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        #expect(try fixture.gsettings(["set", "org.gnome.desktop.interface", "cursor-size", "40"]).status == 0)
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        try await proxy.write("NSGlobalDomain", "AppleLanguages", .array([.string("fr")]))
        try await proxy.write("com.example.Editor", "FontSize", .integer(14))
        let exported = try runCommand(ServiceFixture.prefsBinary.path, ["dconf-export"], environment: fixture.environment)
        #expect(exported.status == 0, "\(exported.stderr)")
        #expect(exported.stdout == "[org/gnome/desktop/interface]\ncursor-size=40\n", "\(exported.stdout)")
        #expect(
            exported.stderr.contains("left out 2 keys no installed GSettings schema describes")
                && exported.stderr.contains("NSGlobalDomain, com.example.Editor"),
            "\(exported.stderr)")
    }

    @Test("a dump with a line that is not UTF-8 is refused, naming the line, and nothing is written")
    func invalidUTF8WritesNothing() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        var keyfile = Data("[org/example/Test]\ntext='fine'\n".utf8)
        keyfile.append(contentsOf: Array("strings=['caf".utf8) + [0xE9] + Array("']\n".utf8))  // Latin-1 é
        let file = fixture.directory.appendingPathComponent("latin1.ini")
        try keyfile.write(to: file)
        let imported = try runCommand(ServiceFixture.prefsBinary.path, ["dconf-import", "--from", file.path], environment: fixture.environment)
        #expect(imported.status == 5, "\(imported.stdout) \(imported.stderr)")
        #expect(imported.stderr.contains("\(file.path): line 3 is not valid UTF-8; nothing was imported"), "\(imported.stderr)")
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        #expect(try await proxy.perform(PreferencesCall.domains()).isEmpty)
    }

    @Test("a key dconf-import cannot represent is named with its reason and nothing is written")
    func unrepresentableWritesNothing() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let dconf = try DconfFixture(settings: fixture, service: service)
        defer { dconf.stop() }
        let longName = String(repeating: "x", count: 1100)
        let keyfile = """
            [org/example/Test]
            text='fine'
            int32=not gvariant

            [org/example/long]
            \(longName)=1
            """
        let file = fixture.directory.appendingPathComponent("dump.ini")
        try keyfile.write(to: file, atomically: true, encoding: .utf8)
        let imported = try dconf.prefs(["dconf-import", "--from", file.path])
        #expect(imported.status == 5, "\(imported.stdout) \(imported.stderr)")
        #expect(imported.stderr.contains("/org/example/Test/int32: the value is not GVariant text"), "\(imported.stderr)")
        #expect(imported.stderr.contains("/org/example/long/\(longName): its path breaks prefsd's limits"), "\(imported.stderr)")
        #expect(imported.stderr.contains("2 of 3 dconf keys cannot be represented in prefsd (above); nothing was imported"))
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        #expect(try await proxy.readIfPresent("org.example.Test", "text") == nil)
        #expect(try await proxy.perform(PreferencesCall.domains()).isEmpty)
    }
}
