import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

@Suite("A settings bundle's default values in the library")
struct SettingsBundleDefaultsTests {
    /// An XDG data directory holding the repository's example bundle.
    static func dataHome() throws -> URL {
        let home = FileManager.default.temporaryDirectory.appendingPathComponent("settings-defaults-\(UUID().uuidString)")
        let settings = home.appendingPathComponent("prefsd/settings")
        try FileManager.default.createDirectory(at: settings, withIntermediateDirectories: true)
        let example = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("examples/settings/com.example.Editor")
        try FileManager.default.copyItem(at: example, to: settings.appendingPathComponent("com.example.Editor"))
        return home
    }

    @Test("the bundle's defaults are read without register(defaults:), below what the app registers and what is stored")
    func defaultsFromTheBundle() async throws {
        let fixture = try await ServiceFixture()
        let home = try Self.dataHome()
        defer { try? FileManager.default.removeItem(at: home) }
        let environment = ["XDG_DATA_HOME": home.path, "XDG_DATA_DIRS": "/nonexistent"]
        let preferences = fixture.preferences("com.example.Editor", environment: environment)
        #expect(preferences.string(forKey: "NextItemName") == "Coffee Cup")
        #expect(preferences.bool(forKey: "AutoSave"))  // from the child pane
        #expect(preferences.integer(forKey: "FontSize") == 12)
        #expect(preferences.double(forKey: "AutoSaveInterval") == 5)

        preferences.register(defaults: ["FontSize": 14])
        #expect(preferences.integer(forKey: "FontSize") == 14)  // the app's own registration wins
        #expect(preferences.string(forKey: "Theme") == "light")  // the others stay

        preferences.set("Tea Pot", forKey: "NextItemName")
        #expect(preferences.synchronize())
        #expect(preferences.string(forKey: "NextItemName") == "Tea Pot")  // stored beats registered
        preferences.removeObject(forKey: "NextItemName")
        #expect(preferences.synchronize())
        #expect(preferences.string(forKey: "NextItemName") == "Coffee Cup")

        let other = fixture.preferences("com.example.NoBundle", environment: environment)
        #expect(other.object(forKey: "NextItemName") == nil)
        let withoutDirectories = fixture.preferences("com.example.Editor", environment: [:])
        #expect(withoutDirectories.object(forKey: "NextItemName") == nil)
    }
}
