import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

/// The `Preferences` library shows an administrator's defaults and dconf locks as it shows
/// managed keys: a default above the application's registered one, a locked key forced.
@Suite("Administrator defaults and locks through the Preferences library")
struct AdministratorDefaultsLibraryTests {
    @Test("a default reads through, the user's value wins, removing it reveals the default again; a locked key is forced")
    func defaultsAndLocks() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        try files.defaults("com.example.Lab", ["Size": .integer(3)])
        try files.keyfile("site", "00-site", "[com/example/Lab]\nProxy='site'\n")
        try files.locks("site", "site", "/com/example/Lab/Proxy\n")
        let fixture = try await ServiceFixture(arguments: files.arguments)
        let preferences = fixture.preferences("com.example.Lab")
        preferences.register(defaults: ["Size": 1, "Proxy": "built-in"])

        #expect(preferences.integer(forKey: "Size") == 3, "the administrator's default goes before the registered one")
        #expect(preferences.string(forKey: "Proxy") == "site")
        #expect(preferences.objectIsForced(forKey: "Proxy"))
        #expect(!preferences.objectIsForced(forKey: "Size"))
        preferences.set("mine", forKey: "Proxy")
        #expect(!preferences.synchronize())
        #expect(preferences.string(forKey: "Proxy") == "site")

        preferences.set(5, forKey: "Size")
        #expect(preferences.synchronize())
        #expect(preferences.integer(forKey: "Size") == 5)
        preferences.removeObject(forKey: "Size")
        #expect(preferences.synchronize())
        // The service announces the default the removal reveals; the object takes it up.
        let deadline = ContinuousClock.now + .seconds(10)
        while preferences.integer(forKey: "Size") != 3, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(preferences.integer(forKey: "Size") == 3)
    }
}
