import DBus
import Foundation
import PreferencesModel
import PrefsdTestSupport
import SyncthingTestSupport

/// One machine of a roaming test: a private bus, store and prefsd whose roaming folder is
/// one Syncthing instance's folder, with a machine ID of its own.
struct RoamingMachine {
    let fixture: ServiceFixture
    let client: ServiceClient
    let name: String
    let arguments: [String]

    static let editor = "com.example.Editor"

    init(cluster: SyncthingCluster, index: Int, name: String, extra: [String] = [], excluded: [String] = ["Window*"]) async throws {
        let home = cluster.instances[index].home
        let idFile = home.appendingPathComponent("machine-id")
        let id = (0..<32).map { _ in String("0123456789abcdef".randomElement()!) }.joined()
        try (id + "\n").write(to: idFile, atomically: true, encoding: .utf8)
        arguments = ["--roaming-dir", cluster.instances[index].folder.path, "--roaming-machine-id-file", idFile.path] + extra
        fixture = try await ServiceFixture(arguments: arguments)
        client = ServiceClient(connection: try fixture.connect())
        self.name = name
        _ = try await client.call(
            "Apply",
            [
                .string("io.github.prefsd.Roaming"),
                ServiceClient.values([
                    "Domains": .array([.string(Self.editor)]),
                    "ExcludedKeys": .dictionary([Self.editor: .array(excluded.map { .string($0) })]),
                    "MachineName": .string(name),
                ]),
                .stringArray([]),
            ])
    }

    /// The value of `key` of the editor domain, or `nil`.
    func value(_ key: String, domain: String = editor) async -> PropertyListValue? {
        try? await client.readValue(domain, key)
    }

    /// Waits until `key` holds `value` (`nil`: absent).
    func waitFor(_ key: String, _ value: PropertyListValue?, timeout: Duration = .seconds(60)) async throws {
        let held = await eventually(timeout: timeout) { await self.value(key) == value }
        if !held {
            throw FixtureError(
                "\(name): \(key) is \(String(describing: await self.value(key))), not \(String(describing: value)) after \(timeout)\n\(fixture.log)")
        }
    }

    /// The roaming status prefsd shows.
    func status() async throws -> [String: PropertyListValue] {
        try await client.readVolatileDomain("io.github.prefsd.Roaming.Status")
    }

    /// `prefs history --json` of the editor domain.
    func history() throws -> [[String: Any]] {
        let result = try fixture.prefs("history", "--json", Self.editor)
        guard result.status == 0, let array = try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]] else {
            throw FixtureError("prefs history failed: \(result.stderr)")
        }
        return array
    }
}
