import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

/// `Read` answers from a reply encoded once per value read (`ReadReplies.swift`): read again
/// and again, and after every kind of change to the key or its domain, it answers what is
/// stored now.
@Suite("Read answers what is stored now, however often it is read")
struct ReadReplyTests {
    static let values: [PropertyListValue] = [
        .string(""), .string("héllo ✓"), .string(String(repeating: "x", count: 5000)), .integer(Int64.min), .integer(1),
        .real(-0.25), .boolean(true), .boolean(false), .data(Data()), .data(Data([0, 1, 255])),
        .date(secondsSince1970: 1_700_000_000.5), .array([]), .array([.integer(1), .string("two")]), .dictionary([:]),
        .dictionary(["nested": .dictionary(["list": .array([.boolean(true), .real(2)])])]),
    ]

    @Test("every value kind reads back the same on each Read, and a changed value is never answered stale")
    func changesAreReadAtOnce() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let other = ServiceClient(connection: try fixture.connect())
        let domain = "com.example.ReadReply"
        for value in Self.values {
            try await client.write(domain, "k", value)
            for reader in [client, other, client] {
                #expect(try await reader.readValue(domain, "k") == value, "\(value)")
            }
        }
        // The same value's bytes under another type, and back.
        try await client.write(domain, "k", .integer(1))
        #expect(try await client.read(domain, "k") == .int64(1))
        try await client.write(domain, "k", .real(1))
        #expect(try await client.read(domain, "k") == .double(1))
        try await client.write(domain, "k", .boolean(true))
        #expect(try await client.read(domain, "k") == .boolean(true))
        try await client.write(domain, "k", .integer(1))
        #expect(try await client.read(domain, "k") == .int64(1))

        let notFound = PreferencesErrorName.notFound.busName
        _ = try await client.call("Remove", [.string(domain), .string("k")])
        #expect(await client.refusal("Read", [.string(domain), .string("k")]) == notFound)
        try await client.write(domain, "k", .string("back"))
        #expect(try await client.readValue(domain, "k") == .string("back"))
        _ = try await client.call("RemoveDomain", [.string(domain)])
        #expect(await client.refusal("Read", [.string(domain), .string("k")]) == notFound)
        try await client.write(domain, "k", .string("again"))
        #expect(try await other.readValue(domain, "k") == .string("again"))
    }

    @Test("the same value under many keys and domains reads back from each")
    func manyKeys() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        for index in 0..<20 {
            try await client.write("com.example.Many\(index % 3)", "key\(index)", .integer(Int64(index)))
        }
        for round in 0..<2 {
            for index in 0..<20 {
                #expect(try await client.readValue("com.example.Many\(index % 3)", "key\(index)") == .integer(Int64(index)), "round \(round)")
            }
        }
    }

    @Test("a key sent in another Unicode spelling, read again, reads the key's value now")
    func spellings() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let domain = "com.example.Spelling"
        let composed = "Caf\u{E9}", decomposed = "Caf\u{65}\u{301}"
        try await client.write(domain, composed, .integer(1))
        for _ in 0..<2 {
            #expect(try await client.readValue(domain, decomposed) == .integer(1))
            #expect(try await client.readValue(domain, composed) == .integer(1))
        }
        try await client.write(domain, decomposed, .integer(2))
        #expect(try await client.readValue(domain, decomposed) == .integer(2))
        #expect(try await client.readValue(domain, composed) == .integer(2))
    }

    @Test("invalid names are refused on every Read, not only the first")
    func invalidNamesEveryTime() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let invalidName = PreferencesErrorName.invalidName.busName
        for _ in 0..<3 {
            #expect(await client.refusal("Read", [.string("not a domain!"), .string("k")]) == invalidName)
            #expect(await client.refusal("Read", [.string("com.example.App"), .string("")]) != nil)
        }
    }
}
