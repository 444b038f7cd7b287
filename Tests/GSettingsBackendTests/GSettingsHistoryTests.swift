import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// Contract 0.3, History: a change made through the GSettings backend is recorded with
/// who = the program that made it.
@Suite("GSettings backend: who in the history")
struct GSettingsHistoryTests {
    @Test("`gsettings set` through the backend is recorded with who = gsettings, new and previous value")
    func gsettingsIsWho() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        for value in ["'first'", "'second'"] {
            let set = try fixture.gsettings("set", GSettingsFixture.schema, "text", value)
            #expect(set.status == 0, "\(set.stderr)")
        }
        // gsettings has synced before it exits; the read confirms the second write is in.
        #expect(try await proxy.read("org.example.Test", "text") == .string("second"))
        let entries = try await proxy.history("org.example.Test", key: "text")
        #expect(entries.map(\.who) == ["gsettings", "gsettings"], "\(entries)")
        #expect(entries.map(\.value) == [.string("first"), .string("second")])
        #expect(entries.last?.previous == .string("first"))
    }
}
