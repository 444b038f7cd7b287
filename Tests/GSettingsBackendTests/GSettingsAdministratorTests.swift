import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

@Suite("GSettings backend: an administrator's dconf system databases and defaults", .serialized)
struct GSettingsAdministratorTests {
    private func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// The test schema's site database: `text` locked to 'site text', `int32` a default of 42.
    private func siteFiles() throws -> AdministratorFiles {
        let files = try AdministratorFiles()
        try files.keyfile(
            "site", "00-site",
            """
            # the site's settings
            [org/example/Test]
            text='site text'
            int32=42
            color='green'
            pair=(3, 4)

            """)
        try files.locks("site", "00-site", "/org/example/Test/text\n")
        return files
    }

    @Test("a locked key is served and not writable; an unlocked default is served until the user sets a value, and again after reset")
    func lockedAndDefault() async throws {
        let files = try siteFiles()
        defer { files.removeAll() }
        let service = try await ServiceFixture(arguments: files.arguments)
        let fixture = try GSettingsFixture(service: service)
        let schema = GSettingsFixture.schema

        #expect(try fixture.gsettings("writable", schema, "text").stdout == "false\n")
        #expect(try fixture.gsettings("get", schema, "text").stdout == "'site text'\n")
        #expect(try fixture.gsettings("set", schema, "text", "'mine'").status != 0)
        #expect(try fixture.gsettings("get", schema, "text").stdout == "'site text'\n")

        #expect(try fixture.gsettings("writable", schema, "int32").stdout == "true\n")
        #expect(try fixture.gsettings("get", schema, "int32").stdout == "42\n")
        #expect(try fixture.gsettings("get", schema, "color").stdout == "'green'\n")
        #expect(try fixture.gsettings("get", schema, "pair").stdout == "(3, 4)\n")
        #expect(try fixture.gsettings("set", schema, "int32", "7").status == 0)
        #expect(try fixture.gsettings("get", schema, "int32").stdout == "7\n")
        #expect(try fixture.gsettings("reset", schema, "int32").status == 0)
        #expect(try fixture.gsettings("get", schema, "int32").stdout == "42\n")
        // A key the database does not set keeps the schema's default.
        let untouched = try fixture.gsettings("get", schema, "int64")
        #expect(untouched.stdout == "int64 6\n", "\(untouched)")
        // The library of the project and `prefs` see the same.
        #expect(try service.prefs("read", "org.example.Test", "int32").stdout == "42\n")
    }

    @Test("a keyfile edited while `gsettings monitor` and a PyGObject watcher run reaches both; a new lock reaches writable-changed")
    func liveEdit() async throws {
        let files = try siteFiles()
        defer { files.removeAll() }
        let service = try await ServiceFixture(arguments: files.arguments)
        let fixture = try GSettingsFixture(service: service)
        let (monitor, monitorOutput) = try fixture.start("gsettings", ["monitor", GSettingsFixture.schema])
        defer { stop(monitor) }
        let (watcher, watcherOutput) = try fixture.startPython(
            """
            s = Gio.Settings.new('org.example.Test')
            loop = GLib.MainLoop()
            def changed(settings, key):
                print('changed', key, settings.get_value(key).print_(True), flush=True)
            def writable(settings, key):
                print('writable', key, settings.is_writable(key), flush=True)
            s.connect('changed', changed)
            s.connect('writable-changed', writable)
            print('ready', s.get_int('int32'), s.is_writable('int32'), flush=True)
            loop.run()
            """)
        defer { stop(watcher) }
        try await waitFor("ready 42 True", in: watcherOutput)
        // The monitor says nothing when it is ready: edit until it reports a change.
        var attempt = 0
        try await waitFor("int64: ", in: monitorOutput, every: .milliseconds(100)) {
            attempt += 1
            if attempt % 5 == 1 {
                try files.keyfile("site", "10-probe", "[org/example/Test]\nint64=int64 \(1000 + attempt)\n")
            }
        }
        try files.keyfile("site", "00-site", "[org/example/Test]\ntext='site text'\nint32=43\n")
        try await waitFor("int32: 43", in: monitorOutput)
        try await waitFor("changed int32 43", in: watcherOutput)

        try files.locks("site", "10-int32", "/org/example/Test/int32\n")
        try await waitFor("writable int32 False", in: watcherOutput)
        #expect(try fixture.gsettings("writable", GSettingsFixture.schema, "int32").stdout == "false\n")
    }

    @Test("a program that resets a key reads the administrator's default back in the same process, not the schema's")
    func resetInProcess() async throws {
        let files = try siteFiles()
        defer { files.removeAll() }
        let service = try await ServiceFixture(arguments: files.arguments)
        let fixture = try GSettingsFixture(service: service)
        let (program, output) = try fixture.startPython(
            """
            s = Gio.Settings.new('org.example.Test')
            print('start', s.get_int('int32'), flush=True)
            s.set_int('int32', 7)
            Gio.Settings.sync()
            print('set', s.get_int('int32'), flush=True)
            s.reset('int32')
            Gio.Settings.sync()
            def report():
                print('now', s.get_int('int32'), flush=True)
                return True
            GLib.timeout_add(100, report)
            GLib.MainLoop().run()
            """)
        defer { stop(program) }
        try await waitFor("set 7", in: output)
        // prefsd's Changed for the removal carries the default it reveals (42).
        try await waitFor("now 42", in: output)
    }

    @Test("a plist default under /etc/prefsd/defaults is served to GSettings and `reset` brings it back")
    func plistDefault() async throws {
        let files = try AdministratorFiles(profile: "")
        defer { files.removeAll() }
        try files.defaults("org.example.Test", ["text": .string("from plist")])
        let service = try await ServiceFixture(arguments: files.arguments)
        let fixture = try GSettingsFixture(service: service)
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "text").stdout == "'from plist'\n")
        #expect(try fixture.gsettings("set", GSettingsFixture.schema, "text", "'mine'").status == 0)
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "text").stdout == "'mine'\n")
        #expect(try fixture.gsettings("reset", GSettingsFixture.schema, "text").status == 0)
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "text").stdout == "'from plist'\n")
    }

    @Test("docs/administrators.md's worked example: a keyfile database with one lock, with the installed GNOME schemas")
    func readmeExample() async throws {
        let files = try AdministratorFiles(profile: "user-db:user\nsystem-db:site\n")
        defer { files.removeAll() }
        try files.keyfile(
            "site", "00-site",
            """
            [org/gnome/desktop/background]
            picture-uri='file:///usr/share/backgrounds/site.png'

            [org/gnome/desktop/session]
            idle-delay=uint32 600

            """)
        try files.locks("site", "site", "/org/gnome/desktop/background/picture-uri\n")
        let service = try await ServiceFixture(arguments: files.arguments)
        let fixture = try GSettingsFixture(service: service)
        #expect(try fixture.gsettings("writable", "org.gnome.desktop.background", "picture-uri").stdout == "false\n")
        #expect(try fixture.gsettings("get", "org.gnome.desktop.background", "picture-uri").stdout == "'file:///usr/share/backgrounds/site.png'\n")
        #expect(try fixture.gsettings("get", "org.gnome.desktop.session", "idle-delay").stdout == "uint32 600\n")
        #expect(try fixture.gsettings("set", "org.gnome.desktop.session", "idle-delay", "900").status == 0)
        #expect(try fixture.gsettings("get", "org.gnome.desktop.session", "idle-delay").stdout == "uint32 900\n")
        #expect(try fixture.gsettings("reset", "org.gnome.desktop.session", "idle-delay").status == 0)
        #expect(try fixture.gsettings("get", "org.gnome.desktop.session", "idle-delay").stdout == "uint32 600\n")
        let read = try service.prefs("read", "org.gnome.desktop")
        #expect(read.stdout.contains("site.png") && read.stdout.contains("600"), "\(read)")
        #expect(try service.prefs("is-forced", "org.gnome.desktop", "background/picture-uri").stdout == "true\n")
    }
}
