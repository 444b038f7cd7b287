import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

@Suite("prefs roaming")
struct RoamingCommandTests {
    @Test("enable, status, disable: the choice lands in io.github.prefsd.Roaming and this machine's file appears under a derived name")
    func enableStatusDisable() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-roam-\(UUID().uuidString)/roaming")
        defer { try? FileManager.default.removeItem(at: folder.deletingLastPathComponent()) }
        let idFile = folder.deletingLastPathComponent().appendingPathComponent("machine-id")
        try FileManager.default.createDirectory(at: folder.deletingLastPathComponent(), withIntermediateDirectories: true)
        let machineID = "5f0e4f8b2c7d4e1a9b3c6d8e0f1a2b3c"
        try (machineID + "\n").write(to: idFile, atomically: true, encoding: .utf8)
        let fixture = try await ServiceFixture(arguments: ["--roaming-dir", folder.path, "--roaming-machine-id-file", idFile.path])
        let client = ServiceClient(connection: try fixture.connect())

        // Not roaming yet: the status says so (no failure), and there is no status domain.
        let before = try fixture.prefs("roaming", "status")
        #expect(before.status == 0 && before.stdout.hasPrefix("no domain roams yet"), "\(before.stdout)\(before.stderr)")
        #expect(try await client.volatileDomains().isEmpty)

        let enabled = try fixture.prefs("roaming", "enable", "com.example.Editor", "--exclude", "Window*", "--exclude", "Recent*")
        #expect(enabled.status == 0, "\(enabled.stderr)")
        #expect(
            try await client.readDomain("io.github.prefsd.Roaming") == [
                "Domains": .array([.string("com.example.Editor")]),
                "ExcludedKeys": .dictionary(["com.example.Editor": .array([.string("Window*"), .string("Recent*")])]),
            ])
        #expect(try fixture.prefs("roaming", "enable", "io.github.prefsd.Portal").status != 0)

        try await client.write("com.example.Editor", "FontSize", .integer(14))
        try await client.write("com.example.Editor", "WindowFrame", .string("0 0 1 1"))
        let published = await eventually(timeout: .seconds(20)) {
            (try? await client.readVolatileDomain("io.github.prefsd.Roaming.Status"))?["Published"] == .integer(1)
        }
        #expect(published)
        let files = try FileManager.default.contentsOfDirectory(atPath: folder.path)
        #expect(files.count == 1)
        #expect(files.allSatisfy { $0.hasSuffix(".prefsd-roaming") && !$0.contains(machineID) }, "\(files)")
        // Written whole from outside the folder: no temporary file ever lies inside it.
        #expect(FileManager.default.fileExists(atPath: folder.path + ".local/tmp"))

        let status = try fixture.prefs("roaming", "status")
        #expect(status.status == 0, "\(status.stderr)")
        #expect(status.stdout.contains("roaming domains: com.example.Editor"), "\(status.stdout)")
        #expect(status.stdout.contains("changes published: 1"), "\(status.stdout)")
        let json = try fixture.prefs("roaming", "status", "--json")
        let object = try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any]
        #expect(object?["Machine"] as? String == files.first.map { String($0.prefix(32)) })
        #expect((object?["SetAside"] as? [Any])?.isEmpty == true)

        #expect(try fixture.prefs("roaming", "disable", "com.example.Editor").status == 0)
        #expect(try await client.readDomain("io.github.prefsd.Roaming") == ["Domains": .array([])])
    }
}
