import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// The schema pages of the Settings window (dconf-editor's job), driven through AT-SPI
/// under Xvfb, checked with `gsettings` through prefsd's GSettings module, on the installed
/// schemas of gsettings-desktop-schemas (`org.gnome.desktop.interface`).
@Suite("Schema pages, driven through AT-SPI", .serialized)
struct SchemaPageTests {
    /// `gsettings` under prefsd: `GSETTINGS_BACKEND=prefsd` with a module directory holding
    /// only the built `libgioprefsd.so`, on the session's private bus, the installed schemas.
    struct GSettings {
        let environment: [String: String]

        init(session: SettingsWindowSession) throws {
            let modules = session.fixture.bus.directory.appendingPathComponent("gio-modules")
            try FileManager.default.createDirectory(at: modules, withIntermediateDirectories: true)
            try FileManager.default.createSymbolicLink(
                at: modules.appendingPathComponent("libgioprefsd.so"),
                withDestinationURL: try BuiltGIOModule.url())
            environment = [
                "GSETTINGS_BACKEND": "prefsd", "GIO_EXTRA_MODULES": modules.path, "GIO_USE_VFS": "local",
                "DBUS_SESSION_BUS_ADDRESS": session.fixture.bus.address,
                "XDG_CONFIG_HOME": session.fixture.bus.directory.appendingPathComponent("config").path,
                "XDG_DATA_DIRS": "/usr/local/share:/usr/share",
            ]
        }

        /// `gsettings ARGUMENTS`, its standard output trimmed (or the failure).
        func run(_ arguments: String...) throws -> String {
            let result = try runCommand("gsettings", arguments, environment: environment)
            guard result.status == 0 else { return "exit \(result.status): \(result.stderr)" }
            return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        }

        /// Waits until `gsettings get SCHEMA KEY` prints `expected` (at most 20 s); returns the last output.
        func waitForGet(_ schema: String, _ key: String, _ expected: String) async throws -> String {
            let deadline = ContinuousClock.now + .seconds(20)
            var last = ""
            while ContinuousClock.now < deadline {
                last = try run("get", schema, key)
                if last == expected { return last }
                try await Task.sleep(for: .milliseconds(50))
            }
            return last
        }
    }

    static let interface = "org.gnome.desktop.interface"

    @Test("a schema page: summaries, an enum's nicks, a range refusing a value outside it, reset to default, a locked key")
    func schemaPage() async throws {
        // An administrator locks gtk-theme (a managed, forced key of the domain the path rule gives).
        let managed = try ServiceFixture.managedDirectory(["org.gnome.desktop": ["interface/gtk-theme": .string("HighContrast")]])
        defer { try? FileManager.default.removeItem(at: managed) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", managed.path, "--allow-unowned-managed-dir"])
        let session = try SettingsWindowSession(fixture: fixture)
        let gsettings = try GSettings(session: session)
        #expect(try gsettings.run("set", Self.interface, "cursor-blink-time", "2000") == "")
        #expect(try gsettings.run("get", Self.interface, "cursor-blink-time") == "2000")
        try session.launch("org.gnome.desktop")

        // The domain lists its schemas; the interface schema's page shows each key's summary,
        // its value beside the default.
        var step = try session.drive(["act", "push button", "Open \(Self.interface) at /org/gnome/desktop/interface/", "click"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        step = try session.drive(["wait-label-containing", "Color scheme"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-label-containing", "cursor-blink-time = 2000 · default 1200"])
        #expect(step.succeeded, "\(step.output)")

        // The enum's page offers exactly its nicks; choosing one writes it as GSettings reads it.
        step = try session.drive(["act", "push button", "Edit color-scheme", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-names", "push button", "default", "prefer-dark", "prefer-light", "--within", "Choices of color-scheme"])
        #expect(step.succeeded, "\(step.output)\n\((try? session.drive(["dump"]))?.output ?? "")")
        step = try session.drive(["act", "push button", "prefer-dark", "click"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try await gsettings.waitForGet(Self.interface, "color-scheme", "'prefer-dark'") == "'prefer-dark'")

        // Reset to Default removes the user's value: GSettings reads the default again.
        step = try session.drive(["act", "push button", "Reset to Default", "click"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try await gsettings.waitForGet(Self.interface, "color-scheme", "'default'") == "'default'")
        #expect(try session.prefs(["read", "org.gnome.desktop", "interface/color-scheme"]).status == 1)
        step = try session.drive(["wait", "push button", "default", "--pressed", "yes"])
        #expect(step.succeeded, "\(step.output)")

        // A range refuses a value outside it, with the range, and stores nothing; one inside is written.
        step = try session.drive(["act", "push button", "Back", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Edit cursor-blink-time", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "text", "cursor-blink-time", "--text", "2000"])
        #expect(step.succeeded, "\(step.output)\n\((try? session.drive(["dump"]))?.output ?? "")")
        step = try session.drive(["set-text", "text", "cursor-blink-time", "5000"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Apply cursor-blink-time", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-label-containing", "takes only a number from 100 to 2500"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        #expect(try gsettings.run("get", Self.interface, "cursor-blink-time") == "2000")
        step = try session.drive(["set-text", "text", "cursor-blink-time", "1500"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Apply cursor-blink-time", "click"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try await gsettings.waitForGet(Self.interface, "cursor-blink-time", "1500") == "1500")

        // The locked key shows the administrator's value and cannot be edited or reset.
        #expect(try gsettings.run("writable", Self.interface, "gtk-theme") == "false")
        step = try session.drive(["act", "push button", "Back", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-label-containing", "gtk-theme = 'HighContrast' · default 'Adwaita' · locked by your administrator"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Edit gtk-theme", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "text", "gtk-theme", "--text", "HighContrast", "--sensitive", "no"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "push button", "Apply gtk-theme", "--sensitive", "no"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "push button", "Reset to Default", "--sensitive", "no"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-label-containing", "Locked by your administrator"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try gsettings.run("get", Self.interface, "gtk-theme") == "'HighContrast'")
    }

    @Test("search on a schema page goes by key names and summaries; summaries are translated")
    func searchKeys() async throws {
        let fixture = try await ServiceFixture()
        let session = try SettingsWindowSession(fixture: fixture)
        try session.launch("/org/gnome/desktop/interface/")
        var step = try session.drive(["wait", "push button", "Edit color-scheme", "--visible", "yes"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        step = try session.drive(["set-text", "entry", "Search keys", "blink time"])  // in a summary only
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-gone", "push button", "Edit color-scheme"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "push button", "Edit cursor-blink-time", "--visible", "yes"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["set-text", "entry", "Search keys", "color-sch"])  // a key name
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "push button", "Edit color-scheme", "--visible", "yes"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-gone", "push button", "Edit cursor-blink-time"])
        #expect(step.succeeded, "\(step.output)")

        // Summaries are translated where the schema is (gsettings-desktop-schemas has a
        // gettext domain and German translations), and search goes by the translated text.
        try session.launch("/org/gnome/desktop/interface/", extra: ["LANGUAGE": "de"])
        step = try session.drive(["wait-label-containing", "Farbschema"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        step = try session.drive(["set-text", "entry", "Search keys", "zeigerblink"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "push button", "Edit cursor-blink-time", "--visible", "yes"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-gone", "push button", "Edit color-scheme"])
        #expect(step.succeeded, "\(step.output)")
    }

    @Test("a relocatable schema at its real path (an app folder) gets its page; a list reads one item per line, is checked, and is written")
    func relocatableAndLists() async throws {
        let fixture = try await ServiceFixture()
        let session = try SettingsWindowSession(fixture: fixture)
        let gsettings = try GSettings(session: session)
        let folder = "org.gnome.desktop.app-folders.folder"
        let path = "/org/gnome/desktop/app-folders/folders/Utilities/"
        #expect(try gsettings.run("set", "\(folder):\(path)", "name", "Utilities") == "")
        #expect(try gsettings.run("set", "\(folder):\(path)", "apps", "['org.gnome.Calculator.desktop']") == "")
        #expect(try gsettings.run("set", "org.gnome.desktop.input-sources", "sources", "[('xkb', 'us'), ('xkb', 'de')]") == "")
        try session.launch("org.gnome.desktop")

        var step = try session.drive(["act", "push button", "Open \(folder) at \(path)", "click"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        step = try session.drive(["wait-label-containing", "name = 'Utilities' · default ''"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Edit name", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "text", "name", "--text", "Utilities"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["set-text", "text", "name", "System Tools"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Apply name", "click"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try await gsettings.waitForGet("\(folder):\(path)", "name", "'System Tools'") == "'System Tools'")

        // An array of tuples in the GVariant editor: one item per line, no newline glyphs.
        try session.launch("/org/gnome/desktop/input-sources/sources")
        step = try session.drive(["wait", "text", "sources", "--text", "[\n  ('xkb', 'us'),\n  ('xkb', 'de')\n]"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")

        // Text that is not a GVariant of the key's type is refused before anything is written.
        step = try session.drive(["set-text", "text", "sources", "[\n  ('xkb', 'us'),\n  ('xkb')\n]"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Apply sources", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-label-containing", "is not a GVariant of type a(ss)"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        #expect(try gsettings.run("get", "org.gnome.desktop.input-sources", "sources") == "[('xkb', 'us'), ('xkb', 'de')]")

        // A list edited over several lines is written as GSettings reads it.
        step = try session.drive(["set-text", "text", "sources", "[\n  ('xkb', 'fr'),\n  ('xkb', 'us')\n]"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Apply sources", "click"])
        #expect(step.succeeded, "\(step.output)")
        #expect(
            try await gsettings.waitForGet("org.gnome.desktop.input-sources", "sources", "[('xkb', 'fr'), ('xkb', 'us')]")
                == "[('xkb', 'fr'), ('xkb', 'us')]")
    }
}
