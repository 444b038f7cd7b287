import Foundation
import GSettingsSchemas
import PreferencesModel
import Testing

/// The schemas by prefsd domain and key, as the service judges values written to them:
/// gsettings-desktop-schemas (which scripts/install-dependencies installs) read from its
/// directory, and schemas a test compiles with `glib-compile-schemas`.
@Suite("Schema index")
struct SchemaIndexTests {
    static let installed = SchemaIndex(directories: ["/usr/share/glib-2.0/schemas"])

    @Test("a fixed schema's key by domain and key: its type, what it holds, why it refuses")
    func fixedKey() throws {
        let idle = try #require(Self.installed.rule(domain: "org.gnome.desktop", key: "session/idle-delay"))
        #expect(idle.schema == "org.gnome.desktop.session" && idle.name == "idle-delay" && idle.type == "u")
        #expect(idle.holds(.integer(600)))
        #expect(!idle.holds(.integer(-1)))
        #expect(!idle.holds(.string("600")))
        #expect(idle.refusal(of: .integer(600), key: "k", given: "600") == nil)
        let refusal = try #require(idle.refusal(of: .string("600"), key: "org.gnome.desktop \"session/idle-delay\"", given: "\"600\""))
        #expect(
            refusal.description
                == "org.gnome.desktop \"session/idle-delay\" cannot hold \"600\": the GSettings schema org.gnome.desktop.session gives it the type u (a uint32)"
        )
    }

    @Test("choices and ranges: an enum's nicks, a range's bounds")
    func choices() throws {
        let scheme = try #require(Self.installed.rule(domain: "org.gnome.desktop", key: "interface/color-scheme"))
        #expect(scheme.holds(.string("prefer-dark")))
        let refusal = try #require(scheme.refusal(of: .string("purple"), key: "color-scheme", given: "\"purple\""))
        #expect(refusal.description.hasSuffix("and it takes only one of default, prefer-dark, prefer-light"))
        let blink = try #require(Self.installed.rule(domain: "org.gnome.desktop", key: "interface/cursor-blink-time"))
        #expect(blink.holds(.integer(2000)))
        #expect(!blink.holds(.integer(5000)))
        #expect(blink.refusal(of: .integer(5000), key: "k", given: "5000")?.description.contains("a number from 100 to 2500") == true)
    }

    @Test("an exact type other than the key's is refused, naming the value that would do")
    func exactType() throws {
        let idle = try #require(Self.installed.rule(domain: "org.gnome.desktop", key: "session/idle-delay"))
        #expect(idle.refusal(of: .integer(60), exactType: "u", key: "k", given: "uint32 60") == nil)
        let refusal = try #require(
            idle.refusal(of: .integer(60), exactType: "i", key: "/org/gnome/desktop/session/idle-delay", given: "int32 60"))
        #expect(
            refusal.description
                == "/org/gnome/desktop/session/idle-delay cannot hold int32 60 (an int32): the GSettings schema org.gnome.desktop.session gives it the type u (a uint32); uint32 60 would do"
        )
    }

    @Test("a relocatable schema at a known place; keys and domains no schema describes")
    func relocatedAndUndescribed() throws {
        let name = try #require(Self.installed.rule(domain: "org.gnome.desktop", key: "app-folders/folders/Utilities/name"))
        #expect(name.schema == "org.gnome.desktop.app-folders.folder")
        #expect(Self.installed.rule(domain: "org.gnome.desktop", key: "app-folders/folders/Utilities/no-such-key") == nil)
        #expect(Self.installed.rule(domain: "org.gnome.desktop", key: "no-such-dir/key") == nil)
        #expect(Self.installed.rule(domain: "com.example.Editor", key: "FontSize") == nil)
        #expect(!Self.installed.describes("com.example.Editor"))
        #expect(Self.installed.schemaCount > 10 && Self.installed.keyCount > 100)
    }

    @Test("the first directory that has a schema id wins; directories without compiled schemas are skipped")
    func precedence() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-schema-index-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let first = directory.appendingPathComponent("first"), second = directory.appendingPathComponent("second")
        try compile(
            #"<schemalist><schema id="org.example.Index" path="/org/example/Index/"><key name="count" type="i"><default>1</default></key></schema></schemalist>"#,
            into: first)
        try compile(
            #"<schemalist><schema id="org.example.Index" path="/org/example/Index/"><key name="count" type="s"><default>'1'</default></key></schema></schemalist>"#,
            into: second)
        let missing = directory.appendingPathComponent("missing").path
        let index = SchemaIndex(directories: [missing, first.path, second.path])
        #expect(index.directories == [first.path, second.path])
        #expect(index.rule(domain: "org.example.Index", key: "count")?.type == "i")
        #expect(SchemaIndex(directories: [second.path, first.path]).rule(domain: "org.example.Index", key: "count")?.type == "s")
        #expect(SchemaIndex.empty.rule(domain: "org.example.Index", key: "count") == nil)
    }

    @Test("GLib's directories for an environment, in GLib's order")
    func directories() {
        #expect(
            SchemaDirectories.glib(environment: ["GSETTINGS_SCHEMA_DIR": "/a:/b", "XDG_DATA_HOME": "/home/u/data", "XDG_DATA_DIRS": "/x:/y/"])
                == ["/a", "/b", "/home/u/data/glib-2.0/schemas", "/x/glib-2.0/schemas", "/y/glib-2.0/schemas"])
        #expect(
            SchemaDirectories.glib(environment: ["HOME": "/home/u"])
                == ["/home/u/.local/share/glib-2.0/schemas", "/usr/local/share/glib-2.0/schemas", "/usr/share/glib-2.0/schemas"])
    }

    private func compile(_ xml: String, into directory: URL) throws {
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try xml.write(to: directory.appendingPathComponent("org.example.Index.gschema.xml"), atomically: true, encoding: .utf8)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/glib-compile-schemas")
        process.arguments = [directory.path]
        try process.run()
        process.waitUntilExit()
        try #require(process.terminationStatus == 0, "glib-compile-schemas failed in \(directory.path)")
    }
}
