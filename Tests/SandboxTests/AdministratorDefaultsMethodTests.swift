import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// `AdministratorDefaults` (contract 0.4): a domain's administrator defaults, told
/// apart from the user's own values, for the host and for a sandboxed application's own
/// domains only.
@Suite("AdministratorDefaults on the bus")
struct AdministratorDefaultsMethodTests {
    static let app = "org.example.Sandboxed"

    @Test("the defaults of a domain (plist and dconf keyfile), whatever the user stored, locked keys left out; a sandbox only for its own domains")
    func defaultsOfADomain() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        try files.defaults(Self.app, ["Size": .integer(5)])
        try files.defaults("com.example.Other", ["Secret": .string("admin only")])
        try files.keyfile("site", "00-site", "[org/example/Sandboxed]\nLocked=true\nName='site'\n")
        try files.locks("site", "site", "/org/example/Sandboxed/Locked\n")
        let fixture = try await ServiceFixture(arguments: files.arguments)
        let proxy = PreferencesProxy(connection: try fixture.connect())

        // The user's own value overrides a default in Read and ReadDomain, not here.
        try await proxy.write(Self.app, "Size", .integer(9))
        try await proxy.write(Self.app, "Mine", .boolean(true))
        #expect(try await proxy.read(Self.app, "Size") == .integer(9))
        // The keyfile's string as the GSettings backend stores it, whatever that is.
        let name = try await proxy.read(Self.app, "Name")
        #expect(try await proxy.administratorDefaults(Self.app) == ["Size": .integer(5), "Name": name])
        #expect(try await proxy.administratorDefaults("com.example.Other") == ["Secret": .string("admin only")])
        #expect(try await proxy.administratorDefaults("com.example.None") == [:])
        do {
            _ = try await proxy.administratorDefaults("not a domain")
            Issue.record("an invalid domain name was answered")
        } catch .refused(.invalidName) {
        } catch {
            Issue.record("an invalid domain name: \(error)")
        }

        // A sandboxed application: its own domain's defaults, and no other domain's.
        let sandbox = try FlatpakSandbox(fixture: fixture, applicationID: Self.app)
        func call(_ domain: String) throws -> (status: Int32, stdout: String, stderr: String) {
            try runCommand(
                "bwrap",
                try sandbox.commandLine([
                    "/usr/bin/gdbus", "call", "--session", "--dest", SandboxBus.busName, "--object-path", PreferencesBus.objectPath,
                    "--method", "\(PreferencesBus.interface).AdministratorDefaults", domain,
                ]))
        }
        let own = try call(Self.app)
        #expect(
            own.status == 0 && own.stdout.contains("'Size': <int64 5>") && own.stdout.contains("'Name': <")
                && !own.stdout.contains("Locked"), "\(own)")
        let other = try call("com.example.Other")
        #expect(
            other.status != 0 && other.stderr.contains(PreferencesErrorName.accessDenied.busName)
                && !other.stdout.contains("admin only"), "\(other)")
    }
}
