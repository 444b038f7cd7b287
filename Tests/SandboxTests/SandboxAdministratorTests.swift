import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// A sandboxed application sees the administrator's defaults and dconf locks of its own
/// domains, as it sees their managed keys, and nothing of another domain's.
@Suite("Administrator defaults and locks seen from a sandbox")
struct SandboxAdministratorTests {
    static let app = "org.example.Sandboxed"

    @Test("a sandboxed app reads its own domain's defaults and locked keys, cannot change a locked key, and reads no other domain's defaults")
    func ownDefaults() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        try files.defaults(Self.app, ["Size": .integer(5)])
        try files.defaults("com.example.Other", ["Secret": .string("admin only")])
        try files.keyfile("site", "00-site", "[org/example/Sandboxed]\nLocked=true\n")
        try files.locks("site", "site", "/org/example/Sandboxed/Locked\n")
        let fixture = try await ServiceFixture(arguments: files.arguments)
        let sandbox = try FlatpakSandbox(fixture: fixture, applicationID: Self.app)

        #expect(try sandbox.prefs("read", Self.app, "Size").stdout == "5\n")
        #expect(try sandbox.prefs("read", Self.app, "Locked").stdout == "1\n")
        #expect(try sandbox.prefs("is-forced", Self.app, "Locked").stdout == "true\n")
        #expect(try sandbox.prefs("write", Self.app, "Locked", "-bool", "NO").status == 3)
        #expect(try sandbox.prefs("write", Self.app, "Size", "-int", "9").status == 0)
        #expect(try sandbox.prefs("read", Self.app, "Size").stdout == "9\n")
        #expect(try sandbox.prefs("delete", Self.app, "Size").status == 0)
        #expect(try sandbox.prefs("read", Self.app, "Size").stdout == "5\n")
        let other = try sandbox.prefs("read", "com.example.Other", "Secret")
        #expect(other.status == 5 && !other.stdout.contains("admin only"), "\(other)")
    }
}
