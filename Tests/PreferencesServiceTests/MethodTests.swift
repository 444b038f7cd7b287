import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

@Suite("The contract's methods and errors")
struct MethodTests {
    private func errorName(_ name: PreferencesErrorName) -> String { name.busName }

    @Test("IsForced is false for a user's own key")
    func isForced() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.App", "k", .integer(1))
        #expect(try await client.call("IsForced", [.string("com.example.App"), .string("k")]) == [.boolean(false)])
    }

    @Test(
        "Invalid names are InvalidName and never create a file",
        arguments: [
            "../x", "", String(repeating: "d", count: 256), "a/b", ".hidden", "-x", "with space",
        ])
    func invalidNames(_ name: String) async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        // prefsd owns its name before its store is open: an answered call means it is.
        #expect(try await client.strings("Domains") == [])
        let before = try filesUnder(fixture.bus.directory)
        for method in ["Read", "Remove", "IsForced"] {
            #expect(await client.refusal(method, [.string(name), .string("k")]) == errorName(.invalidName))
        }
        #expect(await client.refusal("Write", [.string(name), .string("k"), .variant(.int32(1))]) == errorName(.invalidName))
        #expect(await client.refusal("ReplaceDomain", [.string(name), ServiceClient.values(["k": .integer(1)])]) == errorName(.invalidName))
        #expect(await client.refusal("SetVolatileDomain", [.string(name), ServiceClient.values([:])]) == errorName(.invalidName))
        #expect(await client.refusal("Apply", [.string(name), ServiceClient.values(["k": .integer(1)]), .stringArray([])]) == errorName(.invalidName))
        #expect(await client.refusal("RemoveDomain", [.string(name)]) == errorName(.invalidName))
        let after = try filesUnder(fixture.bus.directory)
        #expect(after == before, "new: \(Set(after).subtracting(before).sorted()), gone: \(Set(before).subtracting(after).sorted())")
        #expect(try await client.domains() == [])
    }

    @Test("two spellings of one key are one key, stored once")
    func normalizedKeys() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.App", "Caf\u{65}\u{301}", .integer(1))
        try await client.write("com.example.App", "Caf\u{e9}", .integer(2))
        #expect(try await client.readDomain("com.example.App").count == 1)
        #expect(try await client.readValue("com.example.App", "Caf\u{65}\u{301}") == .integer(2))
        try await client.call("Remove", [.string("com.example.App"), .string("Caf\u{65}\u{301}")])
        fixture.stopService()
        try await fixture.startService()
        let restarted = ServiceClient(connection: try fixture.connect())
        #expect(try await restarted.domains() == [], "no second spelling was left on disk")
    }

    @Test("Values over the limits are QuotaExceeded; the service answers instead of dropping the sender")
    func quotas() async throws {
        let fixture = try await ServiceFixture(arguments: ["--max-domain-size", "3000000", "--max-volatile-size", "100000"])
        let client = ServiceClient(connection: try fixture.connect())
        let big = PropertyListValue.data(Data(count: (1 << 20) + 1))
        #expect(await client.refusal("Write", [.string("com.example.App"), .string("big"), big.dbusVariant]) == errorName(.quotaExceeded))
        let almost = PropertyListValue.data(Data(count: 1_000_000))
        try await client.write("com.example.App", "a", almost)
        try await client.write("com.example.App", "b", almost)
        #expect(await client.refusal("Write", [.string("com.example.App"), .string("c"), almost.dbusVariant]) == errorName(.quotaExceeded))
        #expect(try await client.readDomain("com.example.App").count == 2)
        #expect(
            await client.refusal(
                "SetVolatileDomain",
                [
                    .string("com.example.V"), ServiceClient.values(["x": .data(Data(count: 200_000))]),
                ]) == errorName(.quotaExceeded))
        // The connection survived every refusal.
        #expect(try await client.readValue("com.example.App", "a") == almost)
    }

    @Test("Values that are not property lists are InvalidValue and change nothing")
    func invalidValues() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let refused: [DBusValue] = [
            .objectPath("/a/b"),
            .signature("as"),
            .uint64(UInt64(Int64.max) + 1),
            .structure([.int32(1), .string("x")]),
            .array(element: DBusSignature("{xv}"), [.dictEntry(.int64(1), .variant(.int32(1)))]),
            .array(element: DBusSignature("o"), [.objectPath("/x")]),
            nested(depth: 33),
            nested(depth: 31),
            nestedDictionaries(depth: 21),
        ]
        for value in refused {
            #expect(
                await client.refusal("Write", [.string("com.example.App"), .string("k"), .variant(value)]) == errorName(.invalidValue), "\(value.signature)")
        }
        // The deepest values the bus can carry back in a Changed signal are stored and read back.
        try await client.write("com.example.App", "deep", raw: nested(depth: 30))
        try await client.write("com.example.App", "deepDictionary", raw: nestedDictionaries(depth: 20))
        #expect(try await client.readValue("com.example.App", "deep").nestingDepth == 30)
        #expect(try await client.readDomain("com.example.App").keys.sorted() == ["deep", "deepDictionary"])
    }

    @Test("Version property: Get, GetAll, and Set is refused")
    func versionProperty() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let properties = StandardInterface.properties
        let version = try await client.call("Get", [.string(PreferencesBus.interface), .string("Version")], interface: properties)
        guard case .variant(.string(let text))? = version.first else {
            Issue.record("Version is not a string: \(version)")
            return
        }
        #expect(text == "0.4.0", "the interface is version 0.4 of the contract")
        let all = try await client.call("GetAll", [.string(PreferencesBus.interface)], interface: properties)
        #expect(try PropertyListValue.dictionary(dbus: all[0]) == ["Version": .string(text)])
        do {
            try await client.call("Set", [.string(PreferencesBus.interface), .string("Version"), .variant(.string("9"))], interface: properties)
            Issue.record("Set on Version succeeded")
        } catch let error as DBusError where error.code == .remote {
            #expect(error.name == StandardErrorName.propertyReadOnly)
        }
        let ping = try await client.call("Ping", [], interface: StandardInterface.peer)
        #expect(ping.isEmpty)
    }
}

/// Arrays nested `depth` deep around one integer, as typed arrays (`aa…ai`) in chunks of at
/// most 16 levels, each chunk in a variant: the bus carries it (few containers), and only
/// the service's own nesting limit can refuse it.
func nested(depth: Int) -> DBusValue {
    var value = DBusValue.int32(1)
    var signature = "i"
    var remaining = depth
    while remaining > 0 {
        let chunk = min(16, remaining)
        for _ in 0..<chunk {
            value = .array(element: DBusSignature(stringLiteral: signature), [value])
            signature = "a" + signature
        }
        remaining -= chunk
        if remaining > 0 {
            value = .array(element: .variant, [.variant(value)])
            signature = "av"
            remaining -= 1
        }
    }
    return value
}

/// Dictionaries nested `depth` deep, as typed `a{sa{s…i}}` chunks wrapped in variants.
func nestedDictionaries(depth: Int) -> DBusValue {
    var value = DBusValue.int32(1)
    var signature = "i"
    for level in 0..<depth {
        if level > 0, level % 10 == 0 {
            value = .variant(value)
            signature = "v"
        }
        value = .array(element: DBusSignature(stringLiteral: "{s\(signature)}"), [.dictEntry(.string("k"), value)])
        signature = "a{s\(signature)}"
    }
    return value
}

/// The relative paths of every file and directory under `directory`.
func filesUnder(_ directory: URL) throws -> [String] {
    let enumerator = FileManager.default.enumerator(atPath: directory.path)
    var paths: [String] = []
    while let path = enumerator?.nextObject() as? String { paths.append(path) }
    return paths.sorted()
}
