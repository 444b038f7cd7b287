import Foundation
import SettingsBundle
import Testing

@Suite("Finding settings bundles in the XDG data directories")
struct LocatorTests {
    @Test func searchOrderFollowsTheXDGSpecification() {
        let locator = SettingsBundleLocator(environment: [
            "HOME": "/home/u", "XDG_DATA_HOME": "/data/home", "XDG_DATA_DIRS": "/opt/share:relative:/usr/share",
        ])
        #expect(locator.searchDirectories == ["/data/home/prefsd/settings", "/opt/share/prefsd/settings", "/usr/share/prefsd/settings"])
        let defaults = SettingsBundleLocator(environment: ["HOME": "/home/u"])
        #expect(
            defaults.searchDirectories == [
                "/home/u/.local/share/prefsd/settings", "/usr/local/share/prefsd/settings", "/usr/share/prefsd/settings",
            ])
    }

    @Test func theUsersBundleWinsOverTheSystemsAndBadFolderNamesAreReported() throws {
        let files = try BundleFiles()
        let plist = BundleFiles.plist("<key>Title</key><string>%@</string><key>PreferenceSpecifiers</key><array/>")
        try files.write("home/prefsd/settings/com.example.A/Root.plist", plist.replacingOccurrences(of: "%@", with: "user A"))
        try files.write("system/prefsd/settings/com.example.A/Root.plist", plist.replacingOccurrences(of: "%@", with: "system A"))
        try files.write("system/prefsd/settings/com.example.B/Root.plist", plist.replacingOccurrences(of: "%@", with: "system B"))
        try files.write("system/prefsd/settings/com.example.NoRoot/Other.plist", plist)
        try files.write("system/prefsd/settings/.hidden name/Root.plist", plist)
        let locator = SettingsBundleLocator(environment: [
            "XDG_DATA_HOME": files.root + "/home", "XDG_DATA_DIRS": files.root + "/system",
        ])
        let scan = locator.scan()
        #expect(scan.domains == ["com.example.A", "com.example.B"])
        #expect(scan.problems.count == 1)
        #expect(scan.problems.first?.path == files.root + "/system/prefsd/settings/.hidden name")
        #expect(locator.bundle(for: "com.example.A", languages: ["en"])?.title == "user A")
        #expect(locator.bundle(for: "com.example.B", languages: ["en"])?.title == "system B")
        #expect(locator.bundle(for: "com.example.NoRoot", languages: ["en"]) == nil)
        #expect(locator.bundle(for: "../escape", languages: ["en"]) == nil)
    }

    @Test func languageFoldersBestFirst() {
        #expect(Localization.folders(for: ["pt-BR", "de"]) == ["pt-BR", "pt_BR", "pt", "de", "en", "Base"])
        #expect(Localization.languages(environment: ["LANG": "de_DE.UTF-8"]) == ["de-DE"])
    }
}
