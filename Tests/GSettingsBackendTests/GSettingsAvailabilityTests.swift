import Foundation
import PreferencesProxy
import PrefsdTestSupport
import Testing

@Suite("GSettings backend: a guest that survives without prefsd", .serialized)
struct GSettingsAvailabilityTests {
    @Test("with no session bus at all, programs read the schema defaults, writes fail, and nothing crashes")
    func noBus() throws {
        let fixture = try GSettingsFixture(busAddress: nil)
        let get = try fixture.gsettings("get", GSettingsFixture.schema, "text")
        #expect(get.status == 0 && get.stdout == "'hello'\n", "\(get.stderr)")
        #expect(try fixture.gsettings("writable", GSettingsFixture.schema, "text").stdout == "false\n")
        let result = try fixture.python("""
        s = Gio.Settings.new('org.example.Test')
        print(s.set_string('text', 'x'), s.get_string('text'), s.get_int('int32'))
        Gio.Settings.sync()
        """)
        #expect(result.status == 0 && result.stdout == "False hello 5\n", "\(result.stderr)")
    }

    @Test("with a bus but no prefsd that can be started, programs read the schema defaults and writes fail")
    func noService() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let fixture = try GSettingsFixture(busAddress: bus.address)
        let get = try fixture.gsettings("get", GSettingsFixture.schema, "int32")
        #expect(get.status == 0 && get.stdout == "5\n", "\(get.stderr)")
        let result = try fixture.python("""
        s = Gio.Settings.new('org.example.Test')
        print(s.is_writable('text'), s.set_string('text', 'x'), s.get_string('text'))
        Gio.Settings.sync()
        """)
        #expect(result.status == 0 && result.stdout == "False False hello\n", "\(result.stderr)")
    }

    @Test("with a bus that accepts the connection and never answers, only the first call waits (the 5 s bound); then the defaults, not writable, writes fail")
    func silentBus() async throws {
        let socket = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-silent-\(UUID().uuidString)").path
        defer { unlink(socket) }
        let fixture = try GSettingsFixture(busAddress: "unix:path=\(socket)")
        // Accepts every connection and never reads or says anything.
        let (silent, _) = try await fixture.startListener("""
        import socket, sys
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(sys.argv[1])
        server.listen(16)
        print('listening', flush=True)
        held = []
        while True:
            held.append(server.accept()[0])
        """, [socket])
        defer {
            kill(silent.processIdentifier, SIGKILL)
            silent.waitUntilExit()
        }
        // Ten calls: a backend that made each wait for the connection (or its bound) would
        // hold the program far past runCommand's 30 s, and be killed.
        let result = try fixture.python("""
        s = Gio.Settings.new('org.example.Test')
        answers = [s.get_string('text'), s.get_int('int32'), s.is_writable('text'), s.set_string('text', 'x')]
        answers += [s.get_string('text'), s.get_boolean('flag'), s.is_writable('int32'), s.set_int('int32', 1)]
        answers += [s.get_int('int32'), s.get_strv('strings')]
        print(answers)
        """)
        #expect(result.status == 0, "killed or failed (status \(result.status)): \(result.stderr)")
        #expect(result.stdout == "['hello', 5, False, False, 'hello', False, False, False, 5, ['a']]\n", "\(result.stderr)")
    }

    @Test("prefsd started by bus activation serves the first GSettings program")
    func activation() async throws {
        let service = try ServiceFixture(activatable: ())
        let fixture = try GSettingsFixture(service: service)
        let set = try fixture.gsettings("set", GSettingsFixture.schema, "text", "'activated'")
        #expect(set.status == 0, "\(set.stderr)")
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "text").stdout == "'activated'\n")
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        #expect(try await proxy.read("org.example.Test", "text") == .string("activated"))
    }
}
