import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// On a full disk, a removal larger than the store's 1 MiB reserve (130 values of 8 KB,
    /// with the history on) still goes through, from prefsd's interface and from dconf's.
    @Suite("Large removals on a full disk")
    struct LargeRemovals {
        static let domain = "org.example.big"
        static let count = 130

        /// Writes the 130 values of 8 KB of ``domain``.
        static func writeValues(_ fixture: ServiceFixture) async throws {
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            for index in 0..<count {
                try await client.write(domain, "k\(index)", .string(String(repeating: "x", count: 8_000) + "\(index)"))
            }
        }

        @Test("prefs delete of a domain of 130 values of 8 KB on a full disk goes through (history on); after a restart it is still gone")
        func deleteDomain() async throws {
            let disk = try SmallFileSystem(megabytes: 4)
            let arguments = ["--store", disk.mountPoint.appendingPathComponent("store").path]
            let fixture = try await ServiceFixture(arguments: arguments)
            try await Self.writeValues(fixture)
            try disk.fill()
            let more = try fixture.prefs("write", "org.example.other", "more", "-string", String(repeating: "y", count: 8_000))
            #expect(more.status == 6, "the disk is not full: \(more.stdout)\(more.stderr)")

            let deleted = try fixture.prefs("delete", Self.domain)
            #expect(deleted.status == 0, "prefs delete on a full disk: \(deleted.stderr)")
            #expect(try fixture.prefs("read", Self.domain).status == 1)
            #expect(fixture.stopService() == 0)
            try await fixture.startService(arguments: arguments)
            #expect(try fixture.prefs("read", Self.domain).status == 1, "the removed domain came back after a restart")
            fixture.stopService()
            withExtendedLifetime(disk) {}
        }

        @Test("dconf reset -f of their directory on a full disk holding the store and dconf's file goes through")
        func dconfResetDirectory() async throws {
            let fixture = try ServiceFixture(activatable: ())
            let config = fixture.bus.directory.appendingPathComponent("config")
            let disk = try SmallFileSystem(megabytes: 6, at: config)
            try await fixture.startService(arguments: ["--dconf", "--store", config.appendingPathComponent("store").path])
            defer {
                fixture.stopService()
                withExtendedLifetime(disk) {}
            }
            let profile = fixture.bus.directory.appendingPathComponent("dconf-profile")
            try "user-db:user\n".write(to: profile, atomically: true, encoding: .utf8)
            let environment = [
                "DBUS_SESSION_BUS_ADDRESS": fixture.bus.address, "XDG_CONFIG_HOME": config.path,
                "XDG_RUNTIME_DIR": fixture.runtimeDirectory.path, "DCONF_PROFILE": profile.path,
            ]
            func dconf(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
                try runCommand("dconf", arguments, environment: environment)
            }
            try await Self.writeValues(fixture)
            // The last value in dconf's file: every one is.
            let last = "/org/example/big/k\(Self.count - 1)"
            let deadline = ContinuousClock.now + .seconds(30)
            while try dconf("read", last).stdout.isEmpty, ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
            #expect(try !dconf("read", last).stdout.isEmpty, "dconf's file never held the values")
            try disk.fill()
            let more = try fixture.prefs("write", "org.example.other", "more", "-string", String(repeating: "y", count: 8_000))
            #expect(more.status == 6, "the disk is not full: \(more.stdout)\(more.stderr)")

            let reset = try dconf("reset", "-f", "/org/example/big/")
            #expect(reset.status == 0, "dconf reset -f on a full disk: \(reset.stderr)")
            #expect(try dconf("read", "/org/example/big/k0").stdout.isEmpty)
            #expect(try dconf("list", "/org/example/").stdout.isEmpty)
            #expect(try fixture.prefs("read", Self.domain).status == 1)
        }
    }
}
