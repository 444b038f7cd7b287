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
