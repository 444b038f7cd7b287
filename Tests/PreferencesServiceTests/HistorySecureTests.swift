import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// Contract 0.3, History: values of keys a settings bundle marks `IsSecure` are recorded as
/// changed, without their values.
@Suite("History: IsSecure keys")
struct HistorySecureTests {
    static let domain = "com.example.Secure"

    /// A `prefsd/settings` folder with a bundle for ``domain`` marking `Password` secure
    /// (and `Name`, a text field too, not).
    static func settingsFolder(in directory: URL) throws -> URL {
        let settings = directory.appendingPathComponent("settings", isDirectory: true)
        let bundle = settings.appendingPathComponent(domain, isDirectory: true)
        try FileManager.default.createDirectory(at: bundle, withIntermediateDirectories: true)
        try """
        <?xml version="1.0" encoding="UTF-8"?>
        <!DOCTYPE plist PUBLIC "-//Apple//DTD PLIST 1.0//EN" "http://www.apple.com/DTDs/PropertyList-1.0.dtd">
        <plist version="1.0"><dict><key>PreferenceSpecifiers</key><array>
        <dict><key>Type</key><string>PSTextFieldSpecifier</string><key>Key</key><string>Password</string><key>Title</key><string>Password</string><key>IsSecure</key><true/></dict>
        <dict><key>Type</key><string>PSTextFieldSpecifier</string><key>Key</key><string>Name</string><key>Title</key><string>Name</string></dict>
        </array></dict></plist>
        """.write(to: bundle.appendingPathComponent("Root.plist"), atomically: true, encoding: .utf8)
        return settings
    }

    @Test("a write of an IsSecure key is in the history without its value or previous value; a restore leaves it alone")
    func secureKeyWithoutValues() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-secure-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let settings = try Self.settingsFolder(in: directory)
        let fixture = try await ServiceFixture(arguments: ["--settings-dir", settings.path])
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write(Self.domain, "Password", .string("hunter2"))
        try await client.write(Self.domain, "Password", .string("correct horse"))
        try await client.write(Self.domain, "Name", .string("Ada"))

        let entries: [HistoryEntry] = try await client.perform(PreferencesCall.history(Self.domain))
        #expect(entries.map(\.key) == ["Password", "Password", "Name"])
        let secret = entries.filter { $0.key == "Password" }
        #expect(secret.allSatisfy { $0.secure && $0.value == nil && $0.previous == nil }, "\(secret)")
        #expect(entries.last?.secure == false && entries.last?.value == .string("Ada"), "other keys keep their values")

        // prefs shows the change, never the value.
        let lines = try fixture.prefs("history", Self.domain)
        #expect(lines.status == 0 && !lines.stdout.contains("hunter2") && !lines.stdout.contains("correct horse"), "\(lines)")
        #expect(lines.stdout.contains("Password: (secure) → (secure)"), "\(lines)")
        let json = try fixture.prefs("history", Self.domain, "--json")
        #expect(json.stdout.contains("\"secure\":true") && !json.stdout.contains("hunter2"), "\(json)")
        // Restoring the domain to before every change removes Name, and leaves Password as
        // it is (the journal has no value to put back).
        try await client.perform(PreferencesCall.revertTo(Self.domain, sequence: 0))
        let after = try await client.perform(PreferencesCall.readDomain(Self.domain))
        #expect(after == ["Password": .string("correct horse")])
    }
}
