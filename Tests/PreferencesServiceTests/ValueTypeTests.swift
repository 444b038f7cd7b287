import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

@Suite("Every value type goes in and comes back with its type")
struct ValueTypeTests {
    @Test("a value's quota size is the size its variant takes on the bus, for every type")
    func quotaSizeIsMarshalledSize() {
        let values: [PropertyListValue] = [
            .string(""), .string("a"), .string("héllo ✓"), .string(String(repeating: "x", count: 1000)),
            .integer(0), .integer(Int64.min), .real(-0.25), .boolean(true), .boolean(false),
            .data(Data()), .data(Data([1, 2, 3])), .date(secondsSince1970: 1_700_000_000.5),
            .array([]), .array([.integer(1), .string("two")]), .dictionary([:]), .dictionary(["k": .real(1)]),
        ]
        for value in values {
            #expect(value.marshalledSize == value.dbusVariant.marshalledSize, "\(value)")
        }
    }

    @Test("property-list values round-trip exactly")
    func roundTrip() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let values: [String: PropertyListValue] = [
            "string": .string("héllo ✓"),
            "empty": .string(""),
            "integer": .integer(Int64.min),
            "real": .real(-0.25),
            "true": .boolean(true),
            "false": .boolean(false),
            "data": .data(Data([0, 1, 2, 255])),
            "noData": .data(Data()),
            "date": .date(secondsSince1970: 1_700_000_000.5),
            "array": .array([.integer(1), .string("two"), .array([]), .dictionary([:])]),
            "dictionary": .dictionary(["nested": .dictionary(["list": .array([.boolean(true), .real(2)])]), "d": .date(secondsSince1970: 0)]),
        ]
        for (key, value) in values { try await client.write("com.example.Types", key, value) }
        for (key, value) in values {
            #expect(try await client.readValue("com.example.Types", key) == value, "\(key)")
        }
        #expect(try await client.readDomain("com.example.Types") == values)
        // The wire types are the contract's.
        #expect(try await client.read("com.example.Types", "integer") == .int64(Int64.min))
        #expect(try await client.read("com.example.Types", "data") == .bytes([0, 1, 2, 255]))
        #expect(try await client.read("com.example.Types", "date") == .structure([.double(1_700_000_000.5)]))
        #expect(try await client.read("com.example.Types", "array").signature.rawValue == "av")
        #expect(try await client.read("com.example.Types", "dictionary").signature.rawValue == "a{sv}")
    }

    @Test(
        "every integer type on input reads back as x",
        arguments: [
            (DBusValue.byte(200), Int64(200)), (.int16(-3), -3), (.uint16(65535), 65535), (.int32(-70000), -70000),
            (.uint32(4_000_000_000), 4_000_000_000), (.int64(Int64.max), Int64.max), (.uint64(UInt64(Int64.max)), Int64.max),
        ])
    func integers(_ input: DBusValue, _ expected: Int64) async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.Ints", "n", raw: input)
        #expect(try await client.read("com.example.Ints", "n") == .int64(expected))
    }

    @Test("typed arrays and dictionaries are accepted and read back as av and a{sv}")
    func typedContainers() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.C", "as", raw: .array(element: .string, [.string("a.txt"), .string("b.txt")]))
        try await client.write("com.example.C", "ax", raw: .array(element: DBusSignature("x"), [.int64(1), .int64(2)]))
        try await client.write("com.example.C", "aav", raw: .array(element: DBusSignature("av"), [.array(element: .variant, [.variant(.boolean(true))])]))
        try await client.write("com.example.C", "emptyAs", raw: .array(element: .string, []))
        try await client.write("com.example.C", "a{si}", raw: .dictionary(key: .string, value: DBusSignature("i"), [(.string("one"), .int32(1))]))
        try await client.write("com.example.C", "vv", raw: .variant(.variant(.int32(5))))
        #expect(try await client.readValue("com.example.C", "as") == .array([.string("a.txt"), .string("b.txt")]))
        #expect(try await client.readValue("com.example.C", "ax") == .array([.integer(1), .integer(2)]))
        #expect(try await client.readValue("com.example.C", "aav") == .array([.array([.boolean(true)])]))
        #expect(try await client.read("com.example.C", "emptyAs") == .array(element: .variant, []))
        #expect(try await client.readValue("com.example.C", "a{si}") == .dictionary(["one": .integer(1)]))
        #expect(try await client.read("com.example.C", "vv") == .int64(5))
    }
}
