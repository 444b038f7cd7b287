import DBus
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

/// Contract 0.2: persistent and volatile domains are two namespaces that never affect
/// each other.
@Suite("Persistent and volatile namespaces")
struct NamespaceTests {
    private let notFound = PreferencesErrorName.notFound.busName

    @Test("a volatile domain named like an application domain captures none of its writes")
    func volatileCapturesNothing() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.call("SetVolatileDomain", [.string("com.example.App"), ServiceClient.values(["k": .string("volatile")])])
        try await client.write("com.example.App", "k", .string("persistent"))

        #expect(try await client.readValue("com.example.App", "k") == .string("persistent"))
        #expect(try await client.readDomain("com.example.App") == ["k": .string("persistent")])
        #expect(try await client.readVolatileDomain("com.example.App") == ["k": .string("volatile")])
        #expect(try await client.domains() == ["com.example.App"])

        try await client.call("RemoveVolatileDomain", [.string("com.example.App")])
        #expect(try await client.readValue("com.example.App", "k") == .string("persistent"), "removing the volatile domain kept the write")

        // The write is on disk, not in memory.
        _ = fixture.stopService()
        _ = await fixture.waitForExit()
        try await fixture.startService()
        let again = ServiceClient(connection: try fixture.connect())
        #expect(try await again.readValue("com.example.App", "k") == .string("persistent"))
    }

    @Test("persistent methods neither read nor change a volatile domain, and the reverse")
    func separateMethods() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.Both", "disk", .integer(1))
        // A persistent domain of the same name does not stand in the way.
        try await client.call("SetVolatileDomain", [.string("com.example.Both"), ServiceClient.values(["memory": .integer(2)])])
        try await client.call("SetVolatileDomain", [.string("com.example.OnlyVolatile"), ServiceClient.values(["memory": .integer(3)])])

        #expect(await client.refusal("Read", [.string("com.example.Both"), .string("memory")]) == notFound)
        #expect(await client.refusal("Read", [.string("com.example.OnlyVolatile"), .string("memory")]) == notFound)
        #expect(await client.refusal("ReadDomain", [.string("com.example.OnlyVolatile")]) == notFound)
        #expect(await client.refusal("ReadVolatileDomain", [.string("com.example.Never")]) == notFound)
        let lookup = await client.refusal("Lookup", [.stringArray(["com.example.OnlyVolatile"]), .string("memory")])
        #expect(lookup == notFound, "Lookup searches persistent domains only")
        #expect(try await client.domains() == ["com.example.Both"])
        #expect(try await client.volatileDomains() == ["com.example.Both", "com.example.OnlyVolatile"])

        try await client.call("ReplaceDomain", [.string("com.example.Both"), ServiceClient.values(["disk": .integer(9)])])
        #expect(try await client.readVolatileDomain("com.example.Both") == ["memory": .integer(2)])
        try await client.call("RemoveDomain", [.string("com.example.Both")])
        #expect(try await client.readVolatileDomain("com.example.Both") == ["memory": .integer(2)])
        #expect(try await client.domains() == [])

        try await client.write("com.example.Both", "disk", .integer(1))
        try await client.call("RemoveVolatileDomain", [.string("com.example.Both")])
        #expect(try await client.readDomain("com.example.Both") == ["disk": .integer(1)])
        #expect(try await client.volatileDomains() == ["com.example.OnlyVolatile"])
    }
}
