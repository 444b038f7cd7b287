import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

/// NSUserDefaults posts its did-change notification for every change made through the
/// object ("If domainName is part of the receiver's search list, posts an
/// UserDefaultsDidChangeNotification"), and for "all updates to a local defaults database";
/// key-value observing (here observe(_:) and changes) reports effective changes only.
@Suite("didChangeNotification follows UserDefaults")
struct NotificationTests {
    /// Counts the notifications posted for one object.
    final class Counter {
        let count = Locked(0)
        let token: any NSObjectProtocol

        init(_ preferences: Preferences) {
            let count = count
            token = NotificationCenter.default.addObserver(
                forName: Preferences.didChangeNotification, object: preferences, queue: nil
            ) { _ in count.withLock { $0 += 1 } }
        }

        deinit {
            NotificationCenter.default.removeObserver(token)
        }

        /// Waits until at least `expected` notifications were posted.
        func reaches(_ expected: Int) async -> Bool {
            let count = count
            return await eventually { count.withLock { $0 } >= expected }
        }
    }

    @Test("every change made through the object posts, even one that changes no value")
    func everyChange() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Posts")
        let counter = Counter(preferences)
        var expected = 0
        func step(_ what: String, _ body: () -> Void) async {
            body()
            expected += 1
            #expect(await counter.reaches(expected), "no notification for \(what)")
        }
        await step("setting a key") { preferences.set(1, forKey: "Key") }
        await step("setting it to the value it had") { preferences.set(1, forKey: "Key") }
        await step("removing it") { preferences.removeObject(forKey: "Key") }
        await step("removing an absent key") { preferences.removeObject(forKey: "Absent") }
        await step("setting a persistent domain") { preferences.setPersistentDomain(["A": 1], forName: "com.example.Elsewhere") }
        await step("removing a persistent domain") { preferences.removePersistentDomain(forName: "com.example.Elsewhere") }
        await step("setting a volatile domain") { preferences.setVolatileDomain(["A": 1], forName: "com.example.Volatile") }
        await step("removing a volatile domain") { preferences.removeVolatileDomain(forName: "com.example.Volatile") }
        await step("adding a suite") { preferences.addSuite(named: "com.example.EmptySuite") }
        await step("removing a suite") { preferences.removeSuite(named: "com.example.EmptySuite") }
        #expect(preferences.synchronize())
    }

    @Test("another process's change to a searched domain posts, even when shadowed; observers see effective changes only")
    func otherProcesses() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Watched", arguments: ["-Shadowed", "argument"])
        let seen = Locked<[String]>([])
        let observations = ["Shadowed", "Sentinel"].map { key in
            preferences.observe(key) { _ in seen.withLock { $0.append(key) } }
        }
        let counter = Counter(preferences)
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.Watched", "Shadowed", .string("stored"))  // hidden by the argument domain
        #expect(await counter.reaches(1), "a change to a searched domain posts the notification")
        try await client.write("NSGlobalDomain", "Shadowed", .string("global"))  // hidden too
        #expect(await counter.reaches(2))
        try await client.write("com.example.Unsearched", "Other", .integer(1))  // not searched: no notification
        try await client.write("com.example.Watched", "Sentinel", .integer(1))
        #expect(await eventually { seen.withLock { $0 } == ["Sentinel"] }, "\(seen.withLock { $0 })")
        #expect(await counter.reaches(3))
        #expect(counter.count.withLock { $0 } == 3, "the unsearched domain's change posts nothing")
        _ = observations
    }

    @Test("one notification per whole-domain change, to the object that made it, none from the signals that follow")
    func persistentDomainScenario() async throws {
        // The scenario of swift-corelibs-foundation's test_persistentDomain: remove (absent),
        // set, read from a second object, remove from the second: three notifications.
        let fixture = try await ServiceFixture()
        let first = fixture.preferences("com.example.First")
        let second = fixture.preferences("com.example.Second")
        let counters = [Counter(first), Counter(second)]
        let total = { counters.map { $0.count.withLock { $0 } }.reduce(0, +) }
        let domain = "com.example.PersistentDomainName"
        first.removePersistentDomain(forName: domain)
        #expect(first.persistentDomain(forName: domain) == nil)
        first.setPersistentDomain(["An Integer": 1234, "A String": "Some string", "An Array": [1, 2, "Surprise"]], forName: domain)
        let returned = try #require(second.persistentDomain(forName: domain))
        #expect(returned["An Integer"] as? Int == 1234 && returned["A String"] as? String == "Some string" && returned.count == 3)
        second.removePersistentDomain(forName: domain)
        #expect(fixture.preferences("com.example.Third").persistentDomain(forName: domain) == nil)
        #expect(first.synchronize() && second.synchronize())
        // Sentinel: the notifications come in order on one queue; once the sentinel's is in,
        // any posted for the signals that came back before it would be too.
        first.set(1, forKey: "Sentinel")
        #expect(await eventually { total() >= 4 })
        #expect(total() == 4, "3 changes and the sentinel")
        #expect(counters[1].count.withLock { $0 } == 1)
    }
}
