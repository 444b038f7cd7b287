import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

@Suite("GSettings backend: writes, changes between processes, forced keys", .serialized)
struct GSettingsChangeTests {
    /// A GSettings program that prints each `changed` signal with the new value, and
    /// ends when `text` becomes `done`.
    static let changeWatcher = """
        s = Gio.Settings.new('org.example.Test')
        loop = GLib.MainLoop()
        def changed(settings, key):
            print('changed', key, settings.get_value(key).print_(True), flush=True)
            if key == 'text' and settings.get_string('text') == 'done':
                loop.quit()
        s.connect('changed', changed)
        print('ready', s.get_string('text'), s.get_int('int32'), flush=True)
        loop.run()
        """

    private func stop(_ process: Process) {
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        _ = waitForExit(of: process)
    }

    @Test("delay-apply mode commits its keys in one atomic Apply: one Changed with all of them")
    func delayApply() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        let events = try await proxy.events(in: ["org.example.Test"])
        let result = try fixture.python(
            """
            s = Gio.Settings.new('org.example.Test')
            s.delay()
            s.set_string('text', 'delayed')
            s.set_int('int32', 12)
            s.set_strv('strings', ['p', 'q'])
            s.reset('flag')
            s.apply()
            Gio.Settings.sync()
            """)
        #expect(result.status == 0, "\(result.stderr)")
        let first = try await withDeadline(.seconds(30), "a Changed from the Apply") {
            var iterator = events.makeAsyncIterator()
            return await iterator.next()
        }
        guard case .changed(let change) = first else {
            Issue.record("expected a Changed, got \(String(describing: first))")
            return
        }
        #expect(change.changed == ["text": .string("delayed"), "int32": .integer(12), "strings": .array([.string("p"), .string("q")])])
    }

    @Test("two GSettings programs see each other's changes through their changed signals")
    func twoProcesses() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let (watcher, output) = try fixture.startPython(Self.changeWatcher)
        defer { stop(watcher) }
        try await waitFor("ready hello 5", in: output)
        let writer = try fixture.python(
            """
            s = Gio.Settings.new('org.example.Test')
            s.set_int('int32', 77)
            s.set_value('pair', GLib.Variant('(ii)', (5, 6)))
            s.set_string('text', 'done')
            Gio.Settings.sync()
            """)
        #expect(writer.status == 0, "\(writer.stderr)")
        try await waitFor("changed text 'done'", in: output)
        let seen = try String(contentsOf: output, encoding: .utf8)
        #expect(seen.contains("changed int32 77"))
        #expect(seen.contains("changed pair (5, 6)"))
        #expect(waitForExit(of: watcher) == 0, "the watcher did not quit on 'done'")
    }

    @Test("a `prefs write` by another program reaches `gsettings monitor`")
    func prefsWriteReachesMonitor() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let (monitor, output) = try fixture.start("gsettings", ["monitor", GSettingsFixture.schema])
        defer { stop(monitor) }
        let prefs = ServiceFixture.executable("prefs").path
        let environment = ["DBUS_SESSION_BUS_ADDRESS": service.bus.address]
        // The monitor says nothing when it is ready: write until it reports a change.
        var attempt = 0
        try await waitFor("text: 'sentinel", in: output, every: .milliseconds(100)) {
            attempt += 1
            if attempt % 5 == 1 {
                _ = try runCommand(prefs, ["write", "org.example.Test", "text", "-string", "sentinel-\(attempt)"], environment: environment)
            }
        }
        let wrote = try runCommand(prefs, ["write", "org.example.Test", "int32", "-int", "123"], environment: environment)
        #expect(wrote.status == 0, "\(wrote.stderr)")
        try await waitFor("int32: 123", in: output)
        _ = try runCommand(prefs, ["write", "org.example.Test", "pair", "-string", "@(ii) (8, 9)"], environment: environment)
        try await waitFor("pair: (8, 9)", in: output)
        _ = try runCommand(prefs, ["delete", "org.example.Test", "int32"], environment: environment)
        try await waitFor("int32: 5", in: output)
    }

    @Test("a key an administrator forces reads as forced, is not writable, and becomes writable (writable-changed) when the file goes")
    func forcedKey() async throws {
        let managed = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-managed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: managed, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: managed) }
        let file = managed.appendingPathComponent("org.example.Test.plist")
        try PropertyListValue.dictionary(["text": .string("admin")]).xmlPropertyListData().write(to: file)
        let service = try await ServiceFixture(arguments: ["--managed-dir", managed.path, "--allow-unowned-managed-dir"])
        let fixture = try GSettingsFixture(service: service)

        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "text").stdout == "'admin'\n")
        #expect(try fixture.gsettings("writable", GSettingsFixture.schema, "text").stdout == "false\n")
        #expect(try fixture.gsettings("writable", GSettingsFixture.schema, "int32").stdout == "true\n")
        let refused = try fixture.python(
            """
            s = Gio.Settings.new('org.example.Test')
            print(s.set_string('text', 'mine'), s.get_string('text'))
            """)
        #expect(refused.stdout == "False admin\n", "\(refused.stderr)")

        let (watcher, output) = try fixture.startPython(
            """
            s = Gio.Settings.new('org.example.Test')
            loop = GLib.MainLoop()
            def writable(settings, key):
                print('writable', key, settings.is_writable(key), settings.get_string('text'), flush=True)
                if settings.is_writable('text'):
                    loop.quit()
            s.connect('writable-changed', writable)
            print('ready', s.is_writable('text'), flush=True)
            loop.run()
            """)
        defer { stop(watcher) }
        try await waitFor("ready False", in: output)
        try FileManager.default.removeItem(at: file)
        try await waitFor("writable text True", in: output)
        #expect(try fixture.gsettings("set", GSettingsFixture.schema, "text", "'mine'").status == 0)
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "text").stdout == "'mine'\n")
    }

    @Test("a write prefsd refuses (over its value size limit) is undone in memory once answered")
    func refusedWriteIsUndone() async throws {
        let service = try await ServiceFixture(arguments: ["--max-value-size", "256"])
        let fixture = try GSettingsFixture(service: service)
        let result = try fixture.python(
            """
            s = Gio.Settings.new('org.example.Test')
            s.set_string('text', 'small')
            accepted = s.set_string('text', 'x' * 4096)
            Gio.Settings.sync()
            print(accepted, s.get_string('text'))
            """)
        #expect(result.stdout == "True small\n", "\(result.stderr)")
        #expect(result.stderr.contains("was not saved"))
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "text").stdout == "'small'\n")
    }

    @Test("after prefsd restarts, a running GSettings program still follows changes")
    func serviceRestart() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let (watcher, output) = try fixture.startPython(Self.changeWatcher)
        defer { stop(watcher) }
        try await waitFor("ready hello 5", in: output)
        #expect(service.stopService() == 0)
        try await service.startService()
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        try await proxy.write("org.example.Test", "int32", .integer(31))
        try await waitFor("changed int32 31", in: output)
    }
}
