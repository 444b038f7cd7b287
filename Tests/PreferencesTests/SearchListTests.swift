import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

/// The layers of the search list, highest first.
enum Layer: Int, CaseIterable {
    case forced, argument, application, suite, global, language, registration
}

@Suite("The search list")
struct SearchListTests {
    /// For every pair of layers, a key set in both reads from the higher one.
    @Test("precedence for every pair of layers")
    func everyPair() async throws {
        let pairs = Layer.allCases.flatMap { high in Layer.allCases.filter { $0.rawValue > high.rawValue }.map { (high, $0) } }
        // Layers are filled per pair: its own application domain, suite and key. The
        // language domain holds only AppleLanguages and AppleLocale, so pairs with it use those.
        func key(_ high: Layer, _ low: Layer) -> String {
            if low == .language { return "AppleLanguages" }
            if high == .language { return "AppleLocale" }
            return "Key\(high.rawValue)\(low.rawValue)"
        }
        func value(_ layer: Layer, _ key: String) -> PropertyListValue {
            key == "AppleLanguages" ? .array([.string("from-\(layer)")]) : .string("from-\(layer)")
        }
        var managed: [String: [String: PropertyListValue]] = [:]
        for (high, low) in pairs where high == .forced {
            managed["com.example.P\(high.rawValue)\(low.rawValue)"] = [key(high, low): value(.forced, key(high, low))]
        }
        let directory = try ServiceFixture.managedDirectory(managed)
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path, "--allow-unowned-managed-dir"])
        let client = ServiceClient(connection: try fixture.connect())

        for (high, low) in pairs {
            let key = key(high, low)
            let application = "com.example.P\(high.rawValue)\(low.rawValue)"
            let suite = "group.example.S\(high.rawValue)\(low.rawValue)"
            var arguments: [String] = []
            var registration: [String: Any] = [:]
            for layer in [high, low] {
                let value = value(layer, key)
                switch layer {
                case .forced, .language: break  // set up above, or from the environment below
                case .argument: arguments = ["-\(key)", OpenStepPropertyList.describe(value)]
                case .application where high != .forced: try await client.write(application, key, value)
                case .application: break  // a forced key cannot be written: the forced value is read
                case .suite: try await client.write(suite, key, value)
                case .global: try await client.write("NSGlobalDomain", key, value)
                case .registration: registration[key] = value.foundationObject
                }
            }
            let preferences = fixture.preferences(application, arguments: arguments, environment: ["LANG": "xx_XX.UTF-8", "LANGUAGE": "from-language"])
            preferences.addSuite(named: suite)
            preferences.register(defaults: registration)
            let expected: PropertyListValue = high == .language ? .string("xx_XX") : value(high, key)
            #expect(preferences.value(forKey: key) == expected, "\(high) over \(low)")
        }
    }

    @Test("argument domain: property lists parse, other values stay strings")
    func argumentDomain() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences(
            "com.example.Args",
            arguments: [
                "-AppleLanguages", "(de, fr)", "-Size", "12", "-Options", "{ Mode = fast; Level = 3; }", "-Title", "Hello world",
            ])
        #expect(preferences.stringArray(forKey: "AppleLanguages") == ["de", "fr"])
        #expect(preferences.integer(forKey: "Size") == 12)
        #expect(preferences.value(forKey: "Options") == .dictionary(["Mode": .string("fast"), "Level": .string("3")]))
        #expect(preferences.string(forKey: "Title") == "Hello world")
        // The argument domain is never written to the service.
        #expect(preferences.persistentDomainNames().isEmpty)
    }

    @Test("suites are searched in the order added, after the application domain")
    func suites() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("group.one", "Shared", .string("one"))
        try await client.write("group.two", "Shared", .string("two"))
        try await client.write("group.two", "OnlyTwo", .integer(2))
        let preferences = fixture.preferences("com.example.Suites")
        #expect(preferences.string(forKey: "Shared") == nil)
        preferences.addSuite(named: "group.one")
        preferences.addSuite(named: "group.two")
        #expect(preferences.string(forKey: "Shared") == "one")
        #expect(preferences.integer(forKey: "OnlyTwo") == 2)
        preferences.removeSuite(named: "group.one")
        #expect(preferences.string(forKey: "Shared") == "two")

        let suite = try #require(Preferences(suiteName: "group.one", busAddress: fixture.bus.address))
        #expect(suite.string(forKey: "Shared") == "one")
        suite.set("changed", forKey: "Shared")
        #expect(suite.synchronize())
        #expect(try await client.readValue("group.one", "Shared") == .string("changed"))
        #expect(Preferences(suiteName: "NSGlobalDomain", busAddress: fixture.bus.address) == nil)
    }

    @Test("forced keys win, refuse writes and say so")
    func forced() async throws {
        let directory = try ServiceFixture.managedDirectory(["com.example.Lab": ["Proxy": .string("lab")], "NSGlobalDomain": ["Theme": .string("lab")]])
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path, "--allow-unowned-managed-dir"])
        let preferences = fixture.preferences("com.example.Lab", arguments: ["-Proxy", "mine", "-Theme", "mine"])
        #expect(preferences.string(forKey: "Proxy") == "lab")
        #expect(preferences.string(forKey: "Theme") == "lab", "a key forced in the global domain wins over the argument domain")
        #expect(preferences.objectIsForced(forKey: "Proxy"))
        #expect(preferences.objectIsForced(forKey: "Theme", inDomain: "NSGlobalDomain"))
        #expect(!preferences.objectIsForced(forKey: "Other"))
        preferences.set("mine", forKey: "Proxy")
        #expect(!preferences.synchronize())
        #expect(preferences.string(forKey: "Proxy") == "lab")
        await #expect(
            throws: PreferencesError(.forced("com.example.Lab \"Proxy\" is forced by the administrator's managed preferences and cannot be changed"))
        ) {
            try await preferences.write(.string("mine"), forKey: "Proxy")
        }
    }

    @Test("language domain from the locale environment")
    func language() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Lang", environment: ["LANGUAGE": "fr:de", "LANG": "fr_FR.UTF-8"])
        #expect(preferences.stringArray(forKey: "AppleLanguages") == ["fr", "de"])
        #expect(preferences.string(forKey: "AppleLocale") == "fr_FR")
    }

    @Test("the registration domain belongs to the object and never reaches the service")
    func registration() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Reg")
        preferences.register(defaults: ["ShowTutorial": true])
        #expect(preferences.bool(forKey: "ShowTutorial"))
        #expect(!fixture.preferences("com.example.Reg").bool(forKey: "ShowTutorial"))
        #expect(preferences.persistentDomainNames().isEmpty)
        preferences.set(false, forKey: "ShowTutorial")
        #expect(!preferences.bool(forKey: "ShowTutorial"))
    }
}
