import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

/// NSUserDefaults' synchronize "saves any modifications to the persistent domains and
/// updates all unmodified persistent domains to what is on disk".
@Suite("synchronize() brings in what other processes saved")
struct SynchronizeTests {
    @Test("after synchronize(), every change another client committed before it shows")
    func catchesUp() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let preferences = fixture.preferences("com.example.Sync")
        preferences.addSuite(named: "com.example.SyncSuite")
        #expect(preferences.object(forKey: "Counter") == nil)
        // Each round: another connection's write is answered (committed), then synchronize()
        // and read at once. Without the round trip the signal is often still on its way.
        var missed: [Int] = []
        for round in 1...100 {
            let domain = round.isMultiple(of: 2) ? "com.example.Sync" : "com.example.SyncSuite"
            try await client.write(domain, "Counter", .integer(Int64(round)))
            #expect(preferences.synchronize())
            if preferences.integer(forKey: "Counter") != round { missed.append(round) }
            try await client.call("Remove", [.string(domain), .string("Counter")])
        }
        #expect(missed.isEmpty, "rounds where synchronize() returned before the change showed: \(missed)")
    }

    @Test("after synchronize(), a whole domain another process replaced shows")
    func catchesUpWholeDomain() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let preferences = fixture.preferences("com.example.SyncWhole")
        #expect(preferences.persistentDomain(forName: "com.example.SyncOther") == nil)
        for round in 1...50 {
            try await client.call("ReplaceDomain", [.string("com.example.SyncOther"), ServiceClient.values(["Round": .integer(Int64(round))])])
            #expect(preferences.synchronize())
            #expect(preferences.persistentDomain(forName: "com.example.SyncOther")?["Round"] as? Int == round)
        }
    }
}
