import GSettingsPaths
import Testing

@Suite("GSettings path ↔ prefsd domain and key")
struct GSettingsPathTests {
    @Test(
        "the documented examples map as the table says, and back",
        arguments: [
            ("/org/gnome/TextEditor/style-scheme", "org.gnome.TextEditor", "style-scheme"),
            ("/org/gnome/desktop/interface/gtk-theme", "org.gnome.desktop", "interface/gtk-theme"),
            (
                "/org/gnome/terminal/legacy/profiles:/:b1dcc9dd-5262-4d8d-a863-c897e6d979b9/font",
                "org.gnome.terminal", "legacy/profiles:/:b1dcc9dd-5262-4d8d-a863-c897e6d979b9/font"
            ),
            ("/apps/my.app/key", "apps", "my.app/key"),
            ("/:weird/key", "_", ":weird/key"),
            ("/top", "_", "top"),
            ("/org/gnome/size", "org.gnome", "size"),
            ("/a/b/c/d/e/f", "a.b.c", "d/e/f"),
            ("/org/-dash/k", "org", "-dash/k"),
            ("/org/x_y/ünïcode key", "org.x_y", "ünïcode key"),
        ])
    func examples(path: String, domain: String, key: String) throws {
        let location = try #require(GSettingsPath(settingsKey: path))
        #expect(location.domain == domain)
        #expect(location.key == key)
        #expect(location.settingsKey == path)
        #expect(GSettingsPath(domain: domain, key: key) == location)
    }

    @Test(
        "what is not a GSettings key, or breaks prefsd's limits, has no location",
        arguments: [
            "", "relative/key", "/", "/dir/", "/a//b", "/org/gnome/" + String(repeating: "k", count: 1025),
            "/org/e\u{301}",  // not in normal form C
        ])
    func unmappable(path: String) {
        #expect(GSettingsPath(settingsKey: path) == nil)
    }

    @Test("a long first directory goes into the key rather than overflow the domain name")
    func longDirectory() throws {
        let long = String(repeating: "d", count: 252)  // "org." + 252 bytes passes 255
        let location = try #require(GSettingsPath(settingsKey: "/org/\(long)/x/key"))
        #expect(location.domain == "org")
        #expect(location.key == "\(long)/x/key")
        #expect(location.settingsKey == "/org/\(long)/x/key")
    }

    @Test("a prefsd key the forward rule would not produce is not a GSettings key")
    func notAnImage() {
        #expect(GSettingsPath(domain: "org.gnome", key: "extra/k") == nil)
        #expect(GSettingsPath(domain: "org.gnome.TextEditor.more", key: "k") == nil)
        #expect(GSettingsPath(domain: "_", key: "org/k") == nil)
        #expect(GSettingsPath(domain: "org.gnome.TextEditor", key: "a/b") != nil)
    }

    @Test("a directory's keys live in the domain of the directory")
    func directories() {
        #expect(GSettingsPath.domain(ofDirectory: "/org/gnome/TextEditor/") == "org.gnome.TextEditor")
        #expect(GSettingsPath.domain(ofDirectory: "/org/gnome/terminal/legacy/profiles:/:b1/") == "org.gnome.terminal")
        #expect(GSettingsPath.domain(ofDirectory: "/") == "_")
        #expect(GSettingsPath.domain(ofDirectory: "/no/trailing/slash") == nil)
        #expect(GSettingsPath.settingsPath(ofDomain: "org.gnome.TextEditor") == "/org/gnome/TextEditor/")
        #expect(GSettingsPath.settingsPath(ofDomain: "_") == "/")
    }
}
