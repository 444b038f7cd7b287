import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

/// NSUserDefaults: "When you set a default value, it's changed synchronously within your
/// process, and asynchronously to persistent storage and other processes." Every check
/// here runs right after the change, before prefsd can have answered.
@Suite("Changes show at once in the process that made them")
struct ImmediacyTests {
    @Test("a key set or removed shows at once in every getter, in every object of the process")
    func keys() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Now")
        let other = fixture.preferences("com.example.Now")
        #expect(other.string(forKey: "Color") == nil)
        preferences.set("blue", forKey: "Color")
        #expect(preferences.string(forKey: "Color") == "blue")
        #expect(other.string(forKey: "Color") == "blue")
        #expect(other.dictionaryRepresentation()["Color"] as? String == "blue")
        #expect(other.persistentDomain(forName: "com.example.Now")?["Color"] as? String == "blue")
        #expect(other.persistentDomainNames().contains("com.example.Now"))
        preferences.removeObject(forKey: "Color")
        #expect(other.string(forKey: "Color") == nil)
        #expect(other.persistentDomain(forName: "com.example.Now") == nil)
        #expect(preferences.synchronize())
    }

    @Test("setPersistentDomain and removePersistentDomain show at once, for any domain")
    func wholeDomains() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.Whole", "Old", .string("old"))
        let preferences = fixture.preferences("com.example.Whole")
        let other = fixture.preferences("com.example.Elsewhere")
        #expect(preferences.string(forKey: "Old") == "old")

        preferences.setPersistentDomain(["New": "new"], forName: "com.example.Whole")
        #expect(preferences.string(forKey: "Old") == nil)
        #expect(preferences.string(forKey: "New") == "new")
        #expect(preferences.dictionaryRepresentation()["Old"] == nil)
        #expect(other.persistentDomain(forName: "com.example.Whole") as? [String: String] == ["New": "new"])

        preferences.set("after", forKey: "Later")
        #expect(other.persistentDomain(forName: "com.example.Whole") as? [String: String] == ["New": "new", "Later": "after"])

        other.setPersistentDomain(["Key": 1], forName: "com.example.Unsearched")
        #expect(preferences.persistentDomain(forName: "com.example.Unsearched") as? [String: Int] == ["Key": 1])
        #expect(preferences.persistentDomainNames().contains("com.example.Unsearched"))
        other.removePersistentDomain(forName: "com.example.Unsearched")
        #expect(preferences.persistentDomain(forName: "com.example.Unsearched") == nil)
        #expect(!preferences.persistentDomainNames().contains("com.example.Unsearched"))

        preferences.removePersistentDomain(forName: "com.example.Whole")
        #expect(preferences.string(forKey: "New") == nil)
        #expect(other.persistentDomain(forName: "com.example.Whole") == nil)

        #expect(preferences.synchronize())
        #expect(await client.refusal("ReadDomain", [.string("com.example.Whole")]) != nil, "the removal reached prefsd")
        #expect(await client.refusal("ReadDomain", [.string("com.example.Unsearched")]) != nil)
    }

    @Test("a refused whole-domain change is taken back")
    func refusedReplace() async throws {
        let directory = try ServiceFixture.managedDirectory(["com.example.Managed": ["Proxy": .string("lab")]])
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path, "--allow-unowned-managed-dir"])
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.Managed", "Mine", .string("kept"))
        let preferences = fixture.preferences("com.example.Managed")
        #expect(preferences.string(forKey: "Mine") == "kept")
        preferences.setPersistentDomain(["Proxy": "mine"], forName: "com.example.Managed")
        #expect(!preferences.synchronize())
        #expect(preferences.string(forKey: "Mine") == "kept")
        #expect(preferences.persistentDomain(forName: "com.example.Managed")?["Mine"] as? String == "kept")
    }

    @Test("setVolatileDomain and removeVolatileDomain show at once in every object")
    func volatileDomains() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Volatile")
        let other = fixture.preferences("com.example.VolatileOther")
        preferences.setVolatileDomain(["Session": 1], forName: "com.example.Session")
        #expect(other.volatileDomain(forName: "com.example.Session") as? [String: Int] == ["Session": 1])
        #expect(other.volatileDomainNames.contains("com.example.Session"))
        #expect(preferences.synchronize())
        preferences.removeVolatileDomain(forName: "com.example.Session")
        #expect(other.volatileDomain(forName: "com.example.Session").isEmpty)
        #expect(!other.volatileDomainNames.contains("com.example.Session"))
        #expect(preferences.synchronize())
        #expect(other.volatileDomain(forName: "com.example.Session").isEmpty)
    }
}
