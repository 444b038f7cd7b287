import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// The store directory is 0700 and every file in it 0600.
    @Suite("Permissions")
    struct Permissions {
        static func mode(_ path: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? Int) ?? -1
        }

        /// Checks the directory and every file in it while prefsd runs.
        static func checkModes(_ directory: URL, expecting names: Set<String>) -> [String] {
            var report: [String] = []
            #expect(mode(directory.path) == 0o700, "directory mode \(String(mode(directory.path), radix: 8))")
            let entries = Set((try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? [])
            #expect(names.isSubset(of: entries), "missing: \(names.subtracting(entries))")
            for name in entries.sorted() {
                let fileMode = mode(directory.appendingPathComponent(name).path)
                #expect(fileMode == 0o600, "\(name) has mode \(String(fileMode, radix: 8))")
                report.append("\(name)=\(String(fileMode, radix: 8))")
            }
            return report
        }

        /// Starts prefsd through `sh` with umask 000, so nothing but prefsd's own care
        /// keeps its files private.
        static func startWithOpenUmask(_ fixture: ServiceFixture, store: URL) throws -> Process {
            let process = Process()
            process.environment = helperEnvironment
            process.executableURL = URL(fileURLWithPath: "/bin/sh")
            process.arguments =
                [
                    "-c", "umask 000; address=$1; store=$2; shift 2; exec \"$0\" --address \"$address\" --store \"$store\" --log-level warning \"$@\"",
                    ServiceFixture.binary.path, fixture.bus.address, store.path,
                ] + fixture.administratorArguments
            try process.run()
            return process
        }

        @Test("with umask 000 and a pre-existing 0755 directory: directory 0700, store, -wal, -shm and lock 0600")
        func openUmaskAndWideDirectory() async throws {
            let fixture = try await ServiceFixture()
            fixture.stopService()
            let store = fixture.bus.directory.appendingPathComponent("wide-store")
            try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
            #expect(Self.mode(store.path) == 0o755)

            let process = try Self.startWithOpenUmask(fixture, store: store)
            defer { stop(process, signal: SIGKILL) }
            try await fixture.waitUntilOwned()
            let client = ServiceClient(connection: try fixture.connect())
            for index in 0..<20 { try await client.write("com.example.Modes", "k\(index)", .integer(Int64(index))) }
            client.connection.close()
            let report = Self.checkModes(store, expecting: ["store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "lock", "store.reserve"])
            #expect(stop(process) == 0)
            print("reliability.permissions umask=000 directory=700 \(report.joined(separator: " "))")
        }

        @Test("a store whose files and directory were opened up is narrowed again at start")
        func narrowedAtStart() async throws {
            let fixture = try await ServiceFixture()
            let client = ServiceClient(connection: try fixture.connect())
            try await client.write("com.example.Modes", "k", .integer(1))
            client.connection.close()
            #expect(fixture.stopService() == 0)
            let directory = fixture.storeDirectory
            for name in try FileManager.default.contentsOfDirectory(atPath: directory.path) {
                chmod(directory.appendingPathComponent(name).path, 0o644)
            }
            chmod(directory.path, 0o755)

            try await fixture.startService()
            let again = ServiceClient(connection: try fixture.connect())
            defer { again.connection.close() }
            try await again.write("com.example.Modes", "k2", .integer(2))
            let report = Self.checkModes(directory, expecting: ["store.sqlite", "store.sqlite-wal", "store.sqlite-shm", "lock", "store.reserve"])
            print("reliability.permissions narrowed_from=755/644 \(report.joined(separator: " "))")
        }
    }
}
