import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// Contract 0.3, History: a sandboxed app's changes are recorded with its app ID, and it
/// sees and reverts only its own domains' history.
@Suite("History seen from a sandboxed application")
struct SandboxHistoryTests {
    static let app = "org.example.Sandboxed"

    @Test("who is the app ID; another domain's history can be neither read nor reverted")
    func ownHistoryOnly() async throws {
        let fixture = try await ServiceFixture()
        let host = try PreferencesProxy.connect(address: fixture.bus.address)
        defer { host.close() }
        try await host.write("com.example.Other", "Secret", .string("v1"))
        try await host.write("com.example.Other", "Secret", .string("v2"))
        try await host.write("NSGlobalDomain", "Theme", .string("dark"))
        let sandbox = try FlatpakSandbox(fixture: fixture, applicationID: Self.app)

        #expect(try sandbox.prefs("write", Self.app, "Size", "-int", "3").status == 0)
        #expect(try sandbox.prefs("write", Self.app, "Size", "-int", "4").status == 0)
        let own = try sandbox.prefs("history", Self.app, "--json")
        #expect(own.status == 0, "\(own.stderr)")
        #expect(own.stdout.components(separatedBy: "\"who\":\"\(Self.app)\"").count == 3, "\(own.stdout)")
        #expect(try sandbox.prefs("undo", Self.app).status == 0)
        #expect(try await host.read(Self.app, "Size") == .integer(3))
        #expect(try await host.history(Self.app).last?.who == "restore")

        for arguments in [
            ["history", "com.example.Other"], ["history", "com.example.Other", "Secret"], ["history"], ["history", "-g"],
            ["undo", "com.example.Other"], ["restore", "com.example.Other", "--sequence", "0"],
        ] {
            let result = try sandbox.prefs(arguments)
            #expect(result.status == 5, "prefs \(arguments.joined(separator: " ")): \(result.status) \(result.stdout) \(result.stderr)")
            #expect(!result.stdout.contains("v1") && !result.stdout.contains("Secret"))
        }
        // Nothing was reverted: the host's values stand.
        #expect(try await host.read("com.example.Other", "Secret") == .string("v2"))
        #expect(try await host.history("com.example.Other").map(\.who).allSatisfy { $0 != "restore" })
    }
}
