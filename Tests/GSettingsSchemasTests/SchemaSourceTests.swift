import GSettingsSchemas
import PreferencesModel
import Testing

/// The installed schemas of gsettings-desktop-schemas (which scripts/install-dependencies
/// installs), read through GIO's schema API.
@Suite("Installed GSettings schemas")
struct SchemaSourceTests {
    static let source = SchemaSource()

    @Test("a fixed schema's keys: summary, type, enum nicks, range, default")
    func interfaceKeys() throws {
        let schema = try #require(Self.source.fixed["org.gnome.desktop.interface"])
        #expect(schema.path == "/org/gnome/desktop/interface/")
        let scheme = try #require(schema.keysByName["color-scheme"])
        #expect(scheme.summary == "Color scheme")
        #expect(scheme.choices == .enumeration(["default", "prefer-dark", "prefer-light"]))
        #expect(scheme.defaultValue == .string("default"))
        #expect(try scheme.value(nick: "prefer-dark") == .string("prefer-dark"))
        #expect(throws: SchemaError.self) { try scheme.value(nick: "purple") }

        let blink = try #require(schema.keysByName["cursor-blink-time"])
        guard case .range(let low, let high, _, _) = blink.choices else {
            Issue.record("cursor-blink-time has a range: \(blink.choices)")
            return
        }
        #expect(low == 100 && high == 2500)
        #expect(try blink.value(parsing: "2000") == .integer(2000))
        #expect(throws: SchemaError.outOfRange(key: "cursor-blink-time", allowed: "a number from 100 to 2500")) {
            try blink.value(parsing: "5000")
        }
        // A stored value outside the range reads as the default, as GSettings reads it.
        #expect(blink.effectiveValue(.integer(5000)) == blink.defaultValue)
        #expect(!blink.reads(.integer(5000)))
        #expect(blink.reads(.integer(2000)))
    }

    @Test("an array reads as a list, one item per line, and parses back")
    func listedArray() throws {
        let schema = try #require(Self.source.fixed["org.gnome.desktop.wm.preferences"])
        let key = try #require(schema.keysByName["button-layout"])
        #expect(!key.defaultText.contains("\n"))  // a string stays one line
        let sources = try #require(Self.source.fixed["org.gnome.desktop.input-sources"]?.keysByName["sources"])
        let stored = try sources.value(parsing: "[('xkb', 'us'), ('xkb', 'de')]")
        let text = sources.text(stored)
        #expect(text == "[\n  ('xkb', 'us'),\n  ('xkb', 'de')\n]")
        #expect(try sources.value(parsing: text) == stored)
    }

    @Test("domains by the path rule; a relocatable schema found at a known place and by its keys")
    func instances() throws {
        #expect(Self.source.domains.contains("org.gnome.desktop"))
        let desktop = Self.source.instances(inDomain: "org.gnome.desktop", storedKeys: [])
        #expect(desktop.contains { $0.schema.id == "org.gnome.desktop.interface" && $0.prefsdKey("gtk-theme") == "interface/gtk-theme" })

        // At a known place: an app folder, by its path alone (by its keys no schema would
        // be chosen: none declares the second one).
        let folderPath = "app-folders/folders/Utilities/"
        let found = Self.source.instances(inDomain: "org.gnome.desktop", storedKeys: [folderPath + "name", folderPath + "no-schema-declares-this"])
        let relocated = try #require(found.first { $0.isRelocated })
        #expect(relocated.schema.id == "org.gnome.desktop.app-folders.folder")
        #expect(relocated.path == "/org/gnome/desktop/" + folderPath)
        #expect(relocated.prefsdKey("apps") == folderPath + "apps")

        // Not at a known place: the relocatable schema declaring every key present.
        let folder = Self.source.instances(inDomain: "org.example.launcher", storedKeys: ["groups/a/apps", "groups/a/categories", "groups/a/translate"])
        #expect(folder.map(\.schema.id) == ["org.gnome.desktop.app-folders.folder"])
        // Keys no relocatable schema declares together: no schema.
        #expect(Self.source.instances(inDomain: "org.example.launcher", storedKeys: ["groups/a/apps", "groups/a/nothing-declares-this"]).isEmpty)
    }

    @Test("path patterns: * is one directory, text around it must match")
    func patterns() {
        #expect(RelocatedPaths.matches("/org/gnome/terminal/legacy/profiles:/:b1dcc9dd/", "/org/gnome/terminal/legacy/profiles:/:*/"))
        #expect(!RelocatedPaths.matches("/org/gnome/terminal/legacy/profiles:/b1dcc9dd/", "/org/gnome/terminal/legacy/profiles:/:*/"))
        #expect(!RelocatedPaths.matches("/org/gnome/terminal/legacy/profiles:/:a/b/", "/org/gnome/terminal/legacy/profiles:/:*/"))
    }
}
