import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// What a newcomer meets: one version everywhere, help and messages that say what the code
/// does, and no silent waits or wrong exit statuses.
@Suite("prefs says what is so")
struct HonestOutputTests {
    @Test("prefs, prefsd and prefs-settings print one version, the one the service reports")
    func oneVersion() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        defer { client.connection.close() }
        let served = try await client.perform(PreferencesCall.version())
        for program in [ServiceFixture.prefsBinary, ServiceFixture.binary, ServiceFixture.executable("prefs-settings")] {
            let printed = try runCommand(program.path, ["--version"])
            #expect(printed.status == 0 && printed.stdout == served + "\n", "\(program.lastPathComponent) --version: \(printed.stdout)\(printed.stderr)")
        }
    }

    @Test("help for a verb that does not exist is a usage error that names the nearest verb")
    func helpForUnknownVerb() async throws {
        let fixture = try await ServiceFixture()
        let result = try fixture.prefs("help", "writ")
        #expect(result.status == 2, "\(result.stdout)")
        #expect(result.stderr.contains("'writ' is not a verb of prefs; did you mean 'write'?"), "\(result.stderr)")
        #expect(result.stdout.isEmpty)
    }

    @Test("monitor with no prefsd on the bus exits 69 at once instead of waiting in silence")
    func monitorWithoutService() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        var environment = helperEnvironment
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        let result = try runCommand(ServiceFixture.prefsBinary.path, ["monitor"], environment: environment, timeout: .seconds(60))
        #expect(result.status == 69, "\(result.stdout)\(result.stderr)")
        #expect(result.stderr.contains("prefsd"), "\(result.stderr)")
    }

    @Test("roaming status before anything roams says so and exits 0")
    func roamingStatusBeforeRoaming() async throws {
        let fixture = try await ServiceFixture()
        let result = try fixture.prefs("roaming", "status")
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stdout.hasPrefix("no domain roams yet"), "\(result.stdout)")
    }

    @Test("undo says what it undid")
    func undoSays() async throws {
        let fixture = try await ServiceFixture()
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "FontSize", "-int", "14"))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "FontSize", "-int", "16"))
        let undone = try fixture.prefs("undo", "com.example.Editor")
        expectSuccess(undone)
        #expect(undone.stdout.hasPrefix("undone: "), "\(undone.stdout)")
        #expect(undone.stdout.contains("com.example.Editor FontSize: 14 → 16"), "\(undone.stdout)")
        #expect(try fixture.prefs("read", "com.example.Editor", "FontSize").stdout == "14\n")
    }

    @Test("undo of a change that touched several keys prints each of them")
    func undoSaysEveryKey() async throws {
        let fixture = try await ServiceFixture()
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "FontSize", "-int", "14"))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Theme", "light"))
        // One atomic change of three keys, one changed, one added, one removed (old-style
        // text's bare 16 is a string).
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "{ FontSize = 16; Wrap = yes; }"))
        let undone = try fixture.prefs("undo", "com.example.Editor")
        expectSuccess(undone)
        let lines = undone.stdout.split(separator: "\n")
        #expect(lines.count == 3 && lines.allSatisfy { $0.hasPrefix("undone: ") }, "\(undone.stdout)")
        #expect(undone.stdout.contains("com.example.Editor FontSize: 14 → \"16\"\n"), "\(undone.stdout)")
        #expect(undone.stdout.contains("com.example.Editor Theme: \"light\" → (removed)\n"), "\(undone.stdout)")
        #expect(undone.stdout.contains("com.example.Editor Wrap: (none) → \"yes\"\n"), "\(undone.stdout)")
        #expect(try fixture.prefs("read", "com.example.Editor").stdout == "{\n    FontSize = 14;\n    Theme = light;\n}\n")
    }

    @Test("restore says what it changed, and that it changed nothing when the domain was already so")
    func restoreSays() async throws {
        let fixture = try await ServiceFixture()
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "FontSize", "-int", "14"))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "FontSize", "-int", "16"))
        let restored = try fixture.prefs("restore", "com.example.Editor", "--sequence", "0")
        expectSuccess(restored)
        #expect(
            restored.stdout.hasPrefix("restored: ") && restored.stdout.hasSuffix(" restore com.example.Editor FontSize: 16 → (removed)\n"), "\(restored.stdout)"
        )
        let again = try fixture.prefs("restore", "com.example.Editor", "--sequence", "0")
        expectSuccess(again)
        #expect(again.stdout == "nothing to restore: com.example.Editor is as it was before every recorded change\n", "\(again.stdout)")
        let later = try fixture.prefs("restore", "com.example.Editor", "--to", "2999-01-01T00:00:00Z")
        expectSuccess(later)
        #expect(later.stdout == "nothing to restore: com.example.Editor is as it was at 2999-01-01T00:00:00Z\n", "\(later.stdout)")
    }

    @Test("history quotes every string value, on both sides of a change")
    func historyQuotesBothSides() async throws {
        let fixture = try await ServiceFixture()
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Theme", "light"))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Theme", "solarized dark"))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Size", "-string", "16"))
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "Size", "-int", "16"))
        let lines = try fixture.prefs("history", "com.example.Editor").stdout.split(separator: "\n")
        #expect(lines.count == 4, "\(lines)")
        #expect(lines.first?.hasSuffix(" com.example.Editor Theme: (none) → \"light\"") == true, "\(lines)")
        #expect(lines.dropFirst().first?.hasSuffix(" com.example.Editor Theme: \"light\" → \"solarized dark\"") == true, "\(lines)")
        // A string and an integer of the same digits read apart.
        #expect(lines.last?.hasSuffix(" com.example.Editor Size: \"16\" → 16") == true, "\(lines)")
    }

    @Test("volatile help and messages name prefs's own verbs")
    func volatileMessages() async throws {
        let fixture = try await ServiceFixture()
        // Help text is wrapped to the terminal: compared with its lines joined.
        let help = try fixture.prefs("volatile", "--help").stdout.split(whereSeparator: \.isWhitespace).joined(separator: " ")
        #expect(help.contains("`prefs write` and `prefs delete` change persistent domains only"), "\(help)")
        #expect(!help.contains("change keys of an existing one"))

        let missing = try fixture.prefs("volatile", "read", "com.example.Nope")
        #expect(missing.status == 1 && missing.stderr.contains("`prefs volatile list` lists them"), "\(missing.stderr)")
        expectSuccess(try fixture.prefs("volatile", "set", "com.example.Session", "{ Token = abc; }"))
        let noKey = try fixture.prefs("volatile", "read", "com.example.Session", "Nope")
        #expect(noKey.status == 1 && noKey.stderr.contains("`prefs volatile read com.example.Session` lists its keys"), "\(noKey.stderr)")
        let again = try fixture.prefs("volatile", "set", "com.example.Session", "{ Token = def; }")
        #expect(again.status == 7, "\(again.stderr)")
        #expect(again.stderr.contains("remove it first with `prefs volatile remove com.example.Session`"), "\(again.stderr)")
        #expect(!again.stderr.contains("RemoveVolatileDomain"))
    }

    @Test("a GSettings schema's ID as the domain: read and delete go through the schema, write says where the key lives and creates nothing unasked")
    func schemaIDAsDomain() async throws {
        let fixture = try await ServiceFixture()
        let schema = "org.gnome.desktop.interface"
        let refused = try fixture.prefs("write", schema, "color-scheme", "prefer-light")
        #expect(refused.status == 2, "\(refused.stdout)\(refused.stderr)")
        #expect(refused.stderr.contains("`prefs write org.gnome.desktop interface/color-scheme …`"), "\(refused.stderr)")
        #expect(try fixture.prefs("domains").stdout.isEmpty, "a domain was created")

        expectSuccess(try fixture.prefs("write", "org.gnome.desktop", "interface/color-scheme", "prefer-light"))
        #expect(try fixture.prefs("read", schema, "color-scheme").stdout == "prefer-light\n")
        let whole = try fixture.prefs("read", "--json", schema)
        #expect(whole.stdout == "{\n  \"color-scheme\": \"prefer-light\"\n}\n", "\(whole.stdout)\(whole.stderr)")
        expectSuccess(try fixture.prefs("delete", schema, "color-scheme"))
        #expect(try fixture.prefs("read", "org.gnome.desktop", "interface/color-scheme").status == 1)
        let unset = try fixture.prefs("read", schema, "color-scheme")
        #expect(unset.status == 1 && unset.stderr.contains("\"interface/color-scheme\" does not exist in the domain org.gnome.desktop"), "\(unset.stderr)")

        // Told to, prefs makes the domain of that name.
        expectSuccess(try fixture.prefs("write", "--not-a-schema", schema, "color-scheme", "prefer-light"))
        #expect(try fixture.prefs("domains").stdout == "\(schema)\n")
    }

    @Test("domains lists those only an administrator sets values in, marked, after the user's own")
    func administeredDomains() async throws {
        let managed = try ServiceFixture.managedDirectory([
            "com.example.Lab": ["Proxy": .string("lab")], "com.example.Editor": ["Theme": .string("dark")],
        ])
        defer { try? FileManager.default.removeItem(at: managed) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", managed.path, "--allow-unowned-managed-dir"])
        expectSuccess(try fixture.prefs("write", "com.example.Editor", "FontSize", "-int", "14"))
        #expect(try fixture.prefs("domains").stdout == "com.example.Editor\ncom.example.Lab (administrator only)\n")
        #expect(try fixture.prefs("read", "com.example.Lab", "Proxy").stdout == "lab\n")
    }
}
