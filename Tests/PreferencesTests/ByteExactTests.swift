import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

/// Contract 0.3 through the client library: a value that differs from the stored one in
/// any byte is a change, in the writer's cache, in its observers and in every other process.
@Suite("The client library compares values byte for byte")
struct ByteExactTests {
    static let nfc = Respelling.nfc
    static let nfd = Respelling.nfd

    static let respellings: [Respelling] = [
        Respelling(name: "NFC then NFD string", first: .string(nfc), second: .string(nfd)),
        Respelling(name: "0.0 then -0.0", first: .real(0.0), second: .real(-0.0)),
        Respelling(name: "inside an array", first: .array([.string(nfc), .real(1)]), second: .array([.string(nfd), .real(1)])),
        Respelling(name: "inside a dictionary", first: .dictionary(["r": .real(0.0)]), second: .dictionary(["r": .real(-0.0)])),
    ]

    /// The value's bytes in hex, as the probe prints them.
    static func hex(_ value: PropertyListValue?) -> String {
        value.map { $0.encoded().map { String(format: "%02x", $0) }.joined() } ?? "(nil)"
    }

    @Test("the writer, its observers and other processes see the new bytes", arguments: respellings)
    func respelled(_ pair: Respelling) async throws {
        let fixture = try await ServiceFixture()
        let domain = "com.example.Bytes"
        let output = fixture.bus.directory.appendingPathComponent("watch.txt")
        let watcher = try fixture.startProbe(["watch-encoded", domain, "k", "2"], output: output)
        defer { if watcher.isRunning { watcher.terminate() } }
        #expect(await eventually { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("ready") })

        let preferences = fixture.preferences(domain)
        let seen = Locked<[String]>([])
        let observations = ["k", "sentinel"].map { key in
            preferences.observe(key) { value in seen.withLock { $0.append("\(key)=\(Self.hex(value))") } }
        }
        defer { for observation in observations { observation.cancel() } }

        preferences.set(pair.first, forKey: "k")
        #expect(preferences.synchronize())
        // The other process has heard the first value before the second is written: two
        // changes in quick succession may reach its observer as one, which tells the newest.
        #expect(await eventually { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("k=\(Self.hex(pair.first))") })
        preferences.set(pair.second, forKey: "k")
        #expect(preferences.synchronize())
        #expect(Self.hex(preferences.value(forKey: "k")) == Self.hex(pair.second), "the writer's own cache, after the answer")

        // A byte-identical rewrite is no change; the sentinel written after it shows that
        // every notification the rewrite could cause has come.
        preferences.set(pair.second, forKey: "k")
        preferences.set(1, forKey: "sentinel")
        #expect(preferences.synchronize())
        #expect(await eventually { seen.withLock { $0.last } == "sentinel=\(Self.hex(.integer(1)))" })
        #expect(seen.withLock { $0 } == ["k=\(Self.hex(pair.first))", "k=\(Self.hex(pair.second))", "sentinel=\(Self.hex(.integer(1)))"])

        // Another process that had the domain loaded heard both changes…
        #expect(await eventually { !watcher.isRunning })
        let lines = ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
        #expect(lines == ["ready", "k=\(Self.hex(pair.first))", "k=\(Self.hex(pair.second))"])
        // …and a new one reads the new bytes from prefsd.
        #expect(try fixture.probe(["encoded", domain, "k"]).stdout == Self.hex(pair.second) + "\n")
    }

    @Test("a string set in another process in the other normalisation reaches this process")
    func fromOtherProcess() async throws {
        let fixture = try await ServiceFixture()
        let domain = "com.example.Bytes"
        let preferences = fixture.preferences(domain)
        preferences.set(Self.nfc, forKey: "name")
        #expect(preferences.synchronize())
        let write = try fixture.probe(["write", domain, "name", "\"\(Self.nfd)\""])
        #expect(write.status == 0, "\(write.stderr)")
        #expect(await eventually { preferences.string(forKey: "name").map { Array($0.utf8) } == Array(Self.nfd.utf8) })
    }
}
