import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

@Suite("When prefsd is not running")
struct ServiceAvailabilityTests {
    @Test("the bus starts prefsd on first use")
    func activation() throws {
        let fixture = try ServiceFixture(activatable: ())
        let preferences = fixture.preferences("com.example.Activated")
        #expect(preferences.string(forKey: "Missing") == nil)
        preferences.set("there", forKey: "Key")
        #expect(preferences.synchronize())
        #expect(fixture.preferences("com.example.Other").persistentDomainNames() == ["com.example.Activated"])
    }

    @Test("without a reachable bus, reads answer from local domains and writes fail fast with a clear error")
    func noBus() async throws {
        let preferences = Preferences(
            applicationIdentifier: "com.example.Offline", arguments: ["-Size", "12"], environment: ["LANG": "de_DE.UTF-8"],
            busAddress: "unix:path=/nonexistent/prefsd-test-bus"
        )
        preferences.register(defaults: ["Registered": true])
        let start = ContinuousClock.now
        #expect(preferences.integer(forKey: "Size") == 12)
        #expect(preferences.bool(forKey: "Registered"))
        #expect(preferences.string(forKey: "AppleLocale") == "de_DE")
        #expect(preferences.string(forKey: "Missing") == nil)
        preferences.set("value", forKey: "Key")
        #expect(!preferences.synchronize())
        #expect(preferences.string(forKey: "Key") == nil, "an unsent write is not shown as if it were stored")
        do {
            try await preferences.write(.string("value"), forKey: "Key")
            Issue.record("a write without a bus succeeded")
        } catch let error where error.code == .serviceUnavailable {
            #expect(error.message.contains("/nonexistent/prefsd-test-bus"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
        #expect(preferences.persistentDomainNames() == [])
        #expect(ContinuousClock.now - start < .seconds(10), "nothing waits for a bus that is not there")
    }

    @Test("a bus without prefsd and no way to start it: writes report the missing service")
    func noService() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let preferences = Preferences(applicationIdentifier: "com.example.NoService", arguments: ["-Size", "3"], busAddress: bus.address)
        #expect(preferences.integer(forKey: "Size") == 3)
        do {
            try await preferences.write(.integer(1), forKey: "Key")
            Issue.record("a write without prefsd succeeded")
        } catch let error where error.code == .serviceUnavailable {
            #expect(error.message.contains("ServiceUnknown") || error.message.contains("activat"))
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test("after prefsd restarts, the cache is loaded again: volatile domains are gone, persistent ones stay")
    func restart() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Restart")
        preferences.set("kept", forKey: "Persistent")
        preferences.setVolatileDomain(["Session": "volatile"], forName: "com.example.Session")
        #expect(preferences.synchronize())
        #expect(preferences.volatileDomain(forName: "com.example.Session")["Session"] as? String == "volatile")
        fixture.stopService()
        try await fixture.startService()
        #expect(await eventually { preferences.volatileDomain(forName: "com.example.Session").isEmpty })
        #expect(preferences.string(forKey: "Persistent") == "kept")
    }
}
