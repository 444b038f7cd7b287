import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

/// Contract 0.3: a write that changes nothing is one whose bytes are those stored; a write
/// that differs in any byte is stored, announced with `Changed` and read back as written.
@Suite("A write differing in its bytes is stored")
struct ByteExactWriteTests {
    static let nfc = Respelling.nfc
    static let nfd = Respelling.nfd

    static let respellings: [Respelling] = [
        Respelling(name: "NFC then NFD string", first: .string(nfc), second: .string(nfd)),
        Respelling(name: "NFD then NFC string", first: .string(nfd), second: .string(nfc)),
        Respelling(name: "0.0 then -0.0", first: .real(0.0), second: .real(-0.0)),
        Respelling(name: "date 0.0 then -0.0", first: .date(secondsSince1970: 0.0), second: .date(secondsSince1970: -0.0)),
        Respelling(name: "inside an array", first: .array([.integer(1), .string(nfc)]), second: .array([.integer(1), .string(nfd)])),
        Respelling(name: "-0.0 inside an array", first: .array([.real(0.0)]), second: .array([.real(-0.0)])),
        Respelling(name: "inside a dictionary", first: .dictionary(["k": .string(nfc)]), second: .dictionary(["k": .string(nfd)])),
        Respelling(name: "a dictionary's key", first: .dictionary([nfc: .integer(1)]), second: .dictionary([nfd: .integer(1)])),
        Respelling(
            name: "-0.0 deep inside", first: .dictionary(["a": .array([.dictionary(["r": .real(0.0)])])]),
            second: .dictionary(["a": .array([.dictionary(["r": .real(-0.0)])])])),
    ]

    /// The value's bytes, as the store encodes them: equal exactly when the bytes are.
    static func bytes(_ value: PropertyListValue) -> [UInt8] { value.encoded() }

    @Test("the second write commits, is announced and reads back as written", arguments: respellings)
    func respelled(_ pair: Respelling) async throws {
        let fixture = try await ServiceFixture()
        let writer = ServiceClient(connection: try fixture.connect())
        let reader = ServiceClient(connection: try fixture.connect())
        let domain = "com.example.Bytes"
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: [domain])

        try await writer.write(domain, "k", pair.first)
        try await writer.write(domain, "k", pair.second)
        // A true rewrite, byte for byte: nothing to commit, nothing to announce.
        try await writer.write(domain, "k", pair.second)
        // Signals come in commit order: once the sentinel's is here, every other is.
        try await writer.write(domain, "sentinel", .integer(1))
        try await watcher.wait(for: 3)

        let signals = watcher.signals
        #expect(signals.count == 3, "expected Changed for the first write, the second and the sentinel: \(signals.map(\.changed))")
        if signals.count >= 2 {
            #expect(signals[0].changed.mapValues(Self.bytes) == ["k": Self.bytes(pair.first)])
            #expect(signals[1].changed.mapValues(Self.bytes) == ["k": Self.bytes(pair.second)], "Changed carries the new bytes")
        }
        #expect(signals.last?.changed.keys.sorted() == ["sentinel"])

        // Another connection reads the new bytes, as Read, ReadDomain and Lookup answer them.
        #expect(Self.bytes(try await reader.readValue(domain, "k")) == Self.bytes(pair.second))
        #expect(try await reader.readDomain(domain).mapValues(Self.bytes)["k"] == Self.bytes(pair.second))
        let found = try await reader.call("Lookup", [.stringArray([domain]), .string("k")])
        guard found.count == 2, case .variant(let raw) = found[1] else {
            Issue.record("Lookup answered \(found)")
            return
        }
        #expect(Self.bytes(try PropertyListValue(dbus: raw)) == Self.bytes(pair.second))
    }

    @Test("after a restart the store holds the new bytes")
    func durable() async throws {
        let fixture = try await ServiceFixture()
        let writer = ServiceClient(connection: try fixture.connect())
        try await writer.write("com.example.Bytes", "s", .string(Self.nfc))
        try await writer.write("com.example.Bytes", "s", .string(Self.nfd))
        try await writer.write("com.example.Bytes", "r", .real(0.0))
        try await writer.write("com.example.Bytes", "r", .real(-0.0))
        #expect(fixture.stopService() == 0)
        try await fixture.startService()
        let reader = ServiceClient(connection: try fixture.connect())
        let stored = try await reader.readDomain("com.example.Bytes")
        #expect(stored.mapValues(Self.bytes) == ["s": Self.bytes(.string(Self.nfd)), "r": Self.bytes(.real(-0.0))])
    }

    @Test("Apply and ReplaceDomain store a respelled value too")
    func batches() async throws {
        let fixture = try await ServiceFixture()
        let writer = ServiceClient(connection: try fixture.connect())
        let domain = "com.example.Batches"
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: [domain])
        try await writer.call("Apply", [.string(domain), ServiceClient.values(["s": .string(Self.nfc), "r": .real(0.0)]), .stringArray([])])
        try await writer.call("Apply", [.string(domain), ServiceClient.values(["s": .string(Self.nfd), "r": .real(0.0)]), .stringArray([])])
        try await writer.call("ReplaceDomain", [.string(domain), ServiceClient.values(["s": .string(Self.nfd), "r": .real(-0.0)])])
        try await writer.write(domain, "sentinel", .integer(1))
        try await watcher.wait(for: 4)
        let signals = watcher.signals
        #expect(
            signals.map { $0.changed.mapValues(Self.bytes) } == [
                ["s": Self.bytes(.string(Self.nfc)), "r": Self.bytes(.real(0.0))],
                ["s": Self.bytes(.string(Self.nfd))],  // r is the same bytes: not carried
                ["r": Self.bytes(.real(-0.0))],  // s is the same bytes: not carried
                ["sentinel": Self.bytes(.integer(1))],
            ])
    }

    @Test("a dictionary value naming one key in two normalisations is refused, not merged")
    func normalisedKeysInOneDictionary() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let both = DBusValue.array(
            element: .stringVariantEntry,
            [
                .dictEntry(.string(Self.nfc), .variant(.int64(1))),
                .dictEntry(.string(Self.nfd), .variant(.int64(2))),
            ])
        let refusal = await client.refusal("Write", [.string("com.example.Keys"), .string("d"), .variant(both)])
        #expect(refusal == PreferencesErrorName.invalidValue.busName)
        let twice = DBusValue.array(
            element: .stringVariantEntry,
            [
                .dictEntry(.string("k"), .variant(.int64(1))),
                .dictEntry(.string("k"), .variant(.int64(2))),
            ])
        let nested = DBusValue.array(element: .variant, [.variant(twice)])
        #expect(await client.refusal("Write", [.string("com.example.Keys"), .string("d"), .variant(nested)]) == PreferencesErrorName.invalidValue.busName)
        #expect(try await client.domains().contains("com.example.Keys") == false)
    }
}
