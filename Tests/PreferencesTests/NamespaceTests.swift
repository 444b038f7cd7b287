import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

/// Persistent and volatile domains are two namespaces (contract 0.2; NSUserDefaults:
/// "Domains can be persistent … or volatile", the argument and registration domains are
/// volatile, and a volatile domain is read with volatileDomain(forName:)).
@Suite("Persistent and volatile namespaces")
struct NamespaceTests {
    @Test("a volatile domain named like the application domain never captures its writes")
    func volatileDoesNotCapture() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Captured")
        preferences.setVolatileDomain(["Session": "volatile"], forName: "com.example.Captured")
        #expect(preferences.synchronize())
        preferences.set("kept", forKey: "Key")
        #expect(preferences.synchronize())
        preferences.removeVolatileDomain(forName: "com.example.Captured")
        #expect(preferences.synchronize())

        #expect(preferences.string(forKey: "Key") == "kept")
        #expect(preferences.persistentDomain(forName: "com.example.Captured") as? [String: String] == ["Key": "kept"])
        #expect(try fixture.probe(["read", "com.example.Captured", "Key"]).stdout == "kept\n", "another process reads the write")
        let client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.readDomain("com.example.Captured") == ["Key": .string("kept")])
    }

    @Test("persistentDomain(forName:) never returns a volatile domain, and the reverse")
    func separateReads() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Reader")
        preferences.setVolatileDomain(["Volatile": 1], forName: "com.example.Both")
        preferences.setPersistentDomain(["Persistent": 2], forName: "com.example.Both")
        #expect(preferences.synchronize())
        let reader = fixture.preferences("com.example.OtherReader")
        #expect(reader.persistentDomain(forName: "com.example.Both") as? [String: Int] == ["Persistent": 2])
        #expect(reader.volatileDomain(forName: "com.example.Both") as? [String: Int] == ["Volatile": 1])
        #expect(reader.persistentDomain(forName: "com.example.OnlyVolatile") == nil)
        preferences.setVolatileDomain(["A": 1], forName: "com.example.OnlyVolatile")
        #expect(preferences.synchronize())
        #expect(reader.persistentDomain(forName: "com.example.OnlyVolatile") == nil)
        #expect(!reader.persistentDomainNames().contains("com.example.OnlyVolatile"))
        #expect(reader.volatileDomainNames.contains("com.example.OnlyVolatile"))
    }

    @Test("a volatile domain is not searched by object(forKey:), even as a suite")
    func volatileNotSearched() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.App")
        preferences.setVolatileDomain(["Session": "volatile"], forName: "com.example.Session")
        preferences.setVolatileDomain(["App": "volatile"], forName: "com.example.App")
        #expect(preferences.synchronize())
        preferences.addSuite(named: "com.example.Session")
        #expect(preferences.object(forKey: "Session") == nil)
        #expect(preferences.object(forKey: "App") == nil)
        #expect(preferences.dictionaryRepresentation()["Session"] == nil)
        #expect(preferences.volatileDomain(forName: "com.example.Session") as? [String: String] == ["Session": "volatile"])
    }

    @Test("NSArgumentDomain and NSRegistrationDomain are the object's own volatile domains")
    func ownVolatileDomains() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Own", arguments: ["-Width", "3"])
        preferences.register(defaults: ["Height": 4])
        let names = preferences.volatileDomainNames
        #expect(names.contains(Preferences.argumentDomain) && names.contains(Preferences.registrationDomain), "\(names)")
        #expect(preferences.volatileDomain(forName: Preferences.argumentDomain) as? [String: String] == ["Width": "3"])
        #expect(preferences.volatileDomain(forName: Preferences.registrationDomain) as? [String: Int] == ["Height": 4])
        // They exist already: setting one is refused, as NSUserDefaults raises.
        preferences.setVolatileDomain(["Height": 5], forName: Preferences.registrationDomain)
        #expect(!preferences.synchronize())
        #expect(preferences.integer(forKey: "Height") == 4)
        // Another object has its own.
        let other = fixture.preferences("com.example.Own")
        #expect(other.volatileDomain(forName: Preferences.registrationDomain).isEmpty)
        #expect(!fixture.preferences("com.example.Probe").persistentDomainNames().contains(Preferences.registrationDomain))
    }

    @Test("SetVolatileDomain is refused only by a volatile domain of that name")
    func volatileExists() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Exists")
        preferences.set(1, forKey: "Stored")
        #expect(preferences.synchronize())
        preferences.setVolatileDomain(["A": 1], forName: "com.example.Exists")
        #expect(preferences.synchronize(), "a persistent domain of the name does not matter")
        preferences.setVolatileDomain(["A": 2], forName: "com.example.Exists")
        #expect(!preferences.synchronize(), "a volatile one does")
        #expect(preferences.volatileDomain(forName: "com.example.Exists") as? [String: Int] == ["A": 1])
        #expect(preferences.integer(forKey: "Stored") == 1)
    }

    @Test("createVolatileDomain throws why it was refused: a volatile domain an earlier run left, an own domain, a bad name")
    func volatileRefusalSaysWhy() async throws {
        let fixture = try await ServiceFixture()
        // An earlier run of the program, another process: its volatile domain outlives it.
        #expect(try fixture.prefs("volatile", "set", "com.example.Left", "{ Token = old; }").status == 0)
        let preferences = fixture.preferences("com.example.App")
        let left = await Self.refusal(creating: ["Token": .string("new")], named: "com.example.Left", in: preferences)
        #expect(left?.refusal?.name == .exists && left?.description.contains("com.example.Left exists already") == true, "\(String(describing: left))")
        #expect(preferences.volatileDomain(forName: "com.example.Left") as? [String: String] == ["Token": "old"])
        preferences.removeVolatileDomain(forName: "com.example.Left")
        let again = await Self.refusal(creating: ["Token": .string("new")], named: "com.example.Left", in: preferences)
        #expect(again == nil, "\(String(describing: again))")
        #expect(try fixture.prefs("volatile", "read", "com.example.Left", "Token").stdout == "new\n")

        let own = await Self.refusal(creating: ["A": .integer(1)], named: Preferences.registrationDomain, in: preferences)
        #expect(own?.refusal?.name == .exists && own?.description.contains("register(defaults:)") == true, "\(String(describing: own))")
        let badName = await Self.refusal(creating: ["A": .integer(1)], named: "not a domain", in: preferences)
        #expect(badName?.refusal?.name == .invalidName, "\(String(describing: badName))")
    }

    /// What `createVolatileDomain` threw, or `nil` when it created the domain.
    private static func refusal(
        creating values: [String: PropertyListValue], named name: String, in preferences: Preferences
    ) async -> PreferencesError? {
        do {
            try await preferences.createVolatileDomain(values, forName: name)
            return nil
        } catch {
            return error
        }
    }
}
