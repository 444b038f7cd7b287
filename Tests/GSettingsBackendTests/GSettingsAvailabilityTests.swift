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
        let result = try fixture.python(
            """
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
        let result = try fixture.python(
            """
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
        let (silent, _) = try await fixture.startListener(
            """
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
            _ = waitForExit(of: silent)
        }
        // Ten calls, each timed: the first waits for the connection (at most the bound); the
        // nine after it, together, take less than half of what the first took. A backend
        // that made every call wait (for the bound, or for any fixed time) fails that.
        let result = try fixture.python(
            """
            import time
            s = Gio.Settings.new('org.example.Test')
            calls = [lambda: s.get_string('text'), lambda: s.get_int('int32'), lambda: s.is_writable('text'),
                     lambda: s.set_string('text', 'x'), lambda: s.get_string('text'), lambda: s.get_boolean('flag'),
                     lambda: s.is_writable('int32'), lambda: s.set_int('int32', 1), lambda: s.get_int('int32'),
                     lambda: s.get_strv('strings')]
            answers, seconds = [], []
            for call in calls:
                started = time.monotonic()
                answers.append(call())
                seconds.append(time.monotonic() - started)
            print(answers)
            print(seconds[0], sum(seconds[1:]))
            """, timeout: .seconds(120))
        #expect(result.status == 0, "killed or failed (status \(result.status)): \(result.stderr)")
        let lines = result.stdout.split(separator: "\n")
        #expect(lines.first == "['hello', 5, False, False, 'hello', False, False, False, 5, ['a']]", "\(result.stderr)")
        let times = lines.dropFirst().first.map { $0.split(separator: " ").compactMap { Double($0) } } ?? []
        try #require(times.count == 2, "no timings printed: \(result.stdout)")
        #expect(times[0] < 15, "the first call waited \(times[0]) s, past the 5 s bound")
        #expect(times[1] < times[0] / 2, "the nine calls after the first waited too: \(times[1]) s against the first's \(times[0]) s")
        print("gsettings.silent_bus first_call_s=\(times[0]) next_nine_s=\(times[1])")
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
