import DBus
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import ServiceTestSupport
import Testing

/// The contract's methods and refusals, answered by a service in the test's own process
/// (an in-memory connection: no bus, no prefsd).
@Suite("The contract's methods, in process")
struct InProcessMethodTests {
    private let notFound = PreferencesErrorName.notFound.busName
    private let invalidName = PreferencesErrorName.invalidName.busName
    private let invalidValue = PreferencesErrorName.invalidValue.busName

    @Test("Write, Read and Remove a key; absent keys are NotFound; removing an absent key succeeds")
    func writeReadRemove() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        try await client.write("com.example.Editor", "FontSize", .integer(14))
        #expect(try await client.readValue("com.example.Editor", "FontSize") == .integer(14))
        #expect(try await client.call("Read", [.string("com.example.Editor"), .string("FontSize")]) == [.variant(.int64(14))])
        try await client.call("Remove", [.string("com.example.Editor"), .string("FontSize")])
        #expect(await client.refusal("Read", [.string("com.example.Editor"), .string("FontSize")]) == notFound)
        try await client.call("Remove", [.string("com.example.Editor"), .string("FontSize")])
        #expect(await client.refusal("Read", [.string("com.example.Nothing"), .string("k")]) == notFound)
    }

    @Test("Domains lists persistent domains sorted; an emptied domain disappears; ReadDomain of none is NotFound")
    func domains() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        #expect(try await client.domains() == [])
        for domain in ["org.b", "NSGlobalDomain", "com.a"] { try await client.write(domain, "k", .boolean(true)) }
        #expect(try await client.domains() == ["NSGlobalDomain", "com.a", "org.b"])
        try await client.call("Remove", [.string("com.a"), .string("k")])
        #expect(try await client.domains() == ["NSGlobalDomain", "org.b"])
        #expect(try await client.readDomain("org.b") == ["k": .boolean(true)])
        #expect(await client.refusal("ReadDomain", [.string("com.a")]) == notFound)
    }

    @Test("Apply sets and removes at once; a key in both lists is InvalidArgs, a bad value InvalidValue, and neither changes anything")
    func apply() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        try await client.write("com.example.App", "old", .integer(1))
        try await client.call(
            "Apply", [.string("com.example.App"), InProcessClient.values(["a": .integer(1), "b": .string("two")]), .stringArray(["old"])])
        #expect(try await client.readDomain("com.example.App") == ["a": .integer(1), "b": .string("two")])
        let both = await client.refusal(
            "Apply", [.string("com.example.App"), InProcessClient.values(["c": .integer(3), "a": .integer(9)]), .stringArray(["a"])])
        #expect(both == StandardErrorName.invalidArgs)
        let badValue: DBusValue = .dictionary(
            key: .string, value: .variant, [(.string("c"), .variant(.int32(3))), (.string("d"), .variant(.objectPath("/x")))])
        #expect(await client.refusal("Apply", [.string("com.example.App"), badValue, .stringArray([])]) == invalidValue)
        #expect(try await client.readDomain("com.example.App") == ["a": .integer(1), "b": .string("two")])
    }

    @Test("ApplyIf applies only while what it expects holds, and answers whether it did")
    func applyIf() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        try await client.write("com.example.Cas", "n", .integer(1))
        func applyIf(expecting value: Int64, set newValue: Int64) async throws -> [DBusValue] {
            try await client.call(
                "ApplyIf",
                [
                    .string("com.example.Cas"), InProcessClient.values(["n": .integer(value)]), .stringArray(["absent"]),
                    InProcessClient.values(["n": .integer(newValue)]), .stringArray([]),
                ])
        }
        #expect(try await applyIf(expecting: 1, set: 2) == [.boolean(true)])
        #expect(try await applyIf(expecting: 1, set: 3) == [.boolean(false)], "n is 2 by now")
        #expect(try await client.readValue("com.example.Cas", "n") == .integer(2))
    }

    @Test("ReplaceDomain and RemoveDomain; removing a domain that does not exist succeeds")
    func replaceAndRemoveDomain() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        try await client.write("com.example.App", "gone", .integer(1))
        try await client.call("ReplaceDomain", [.string("com.example.App"), InProcessClient.values(["new": .boolean(false)])])
        #expect(try await client.readDomain("com.example.App") == ["new": .boolean(false)])
        try await client.call("RemoveDomain", [.string("com.example.App")])
        #expect(await client.refusal("ReadDomain", [.string("com.example.App")]) == notFound)
        try await client.call("RemoveDomain", [.string("com.example.Never")])
        #expect(try await client.domains() == [])
    }

    @Test("Volatile domains: set, read, list, Exists, remove")
    func volatileDomains() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        try await client.call("SetVolatileDomain", [.string("com.example.Session"), InProcessClient.values(["k": .string("v")])])
        #expect(try await client.volatileDomains() == ["com.example.Session"])
        #expect(try await client.domains() == [])
        #expect(try await client.readVolatileDomain("com.example.Session") == ["k": .string("v")])
        let again = await client.refusal("SetVolatileDomain", [.string("com.example.Session"), InProcessClient.values([:])])
        #expect(again == PreferencesErrorName.exists.busName)
        try await client.call("RemoveVolatileDomain", [.string("com.example.Session")])
        #expect(try await client.volatileDomains() == [])
        #expect(await client.refusal("ReadVolatileDomain", [.string("com.example.Session")]) == notFound)
    }

    @Test("Lookup finds the first domain of the search list that has the key")
    func lookup() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        try await client.write("NSGlobalDomain", "AppleLocale", .string("en_US"))
        let searchList = DBusValue.stringArray(["com.example.App", "NSGlobalDomain"])
        #expect(try await client.call("Lookup", [searchList, .string("AppleLocale")]) == [.string("NSGlobalDomain"), .variant(.string("en_US"))])
        try await client.write("com.example.App", "AppleLocale", .string("de_DE"))
        #expect(try await client.call("Lookup", [searchList, .string("AppleLocale")]) == [.string("com.example.App"), .variant(.string("de_DE"))])
        #expect(await client.refusal("Lookup", [.stringArray(["com.example.App"]), .string("Missing")]) == notFound)
        #expect(await client.refusal("Lookup", [.stringArray(["com.example.App", "../x"]), .string("k")]) == invalidName)
    }

    @Test("Invalid domain names and keys are InvalidName, whatever the method", arguments: ["../x", "", "a/b", ".hidden", "with space"])
    func invalidNames(_ name: String) async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        for method in ["Read", "Remove", "IsForced"] {
            #expect(await client.refusal(method, [.string(name), .string("k")]) == invalidName, "\(method)")
        }
        #expect(await client.refusal("Write", [.string(name), .string("k"), .variant(.int32(1))]) == invalidName)
        #expect(await client.refusal("ReplaceDomain", [.string(name), InProcessClient.values(["k": .integer(1)])]) == invalidName)
        #expect(await client.refusal("RemoveDomain", [.string(name)]) == invalidName)
        for key in ["", String(repeating: "k", count: 1025)] {
            #expect(await client.refusal("Write", [.string("com.example.App"), .string(key), .variant(.int32(1))]) == invalidName)
        }
        #expect(try await client.domains() == [])
    }

    @Test("Values that are not property lists are InvalidValue and change nothing")
    func invalidValues() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        let refused: [DBusValue] = [
            .objectPath("/a/b"), .signature("as"), .uint64(UInt64(Int64.max) + 1), .structure([.int32(1), .string("x")]),
            .array(element: DBusSignature("o"), [.objectPath("/x")]),
        ]
        for value in refused {
            #expect(await client.refusal("Write", [.string("com.example.App"), .string("k"), .variant(value)]) == invalidValue, "\(value.signature)")
        }
        #expect(try await client.domains() == [])
    }

    @Test("A wrong argument signature is InvalidArgs; unknown methods and interfaces are refused as such")
    func wrongCalls() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        #expect(await client.refusal("Write", [.string("com.example.App"), .string("k")]) == StandardErrorName.invalidArgs)
        #expect(await client.refusal("Read", [.string("com.example.App"), .int32(1)]) == StandardErrorName.invalidArgs)
        #expect(await client.refusal("Domains", [.string("extra")]) == StandardErrorName.invalidArgs)
        #expect(await client.refusal("Frobnicate", []) == StandardErrorName.unknownMethod)
        do {
            try await client.call("Read", [.string("com.example.App"), .string("k")], interface: "com.example.Nothing")
            Issue.record("a call of an interface the object lacks was answered")
        } catch let error as DBusError where error.code == .remote {
            #expect(error.name == StandardErrorName.unknownInterface)
        }
    }

    @Test("a call that expects no reply is carried out and answered with nothing")
    func noReplyExpected() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        var write = PreferencesCall.write("com.example.Quiet", "k", .integer(1)).message
        write.noReplyExpected = true
        let delivered = harness.connection.deliver(write)
        // Committed: its Changed is sent.
        #expect(await harness.connection.preferencesSignals(count: 1) == [SentSignal(changed: "com.example.Quiet", ["k": .integer(1)])])
        let client = InProcessClient(connection: harness.connection)
        #expect(try await client.readValue("com.example.Quiet", "k") == .integer(1))
        #expect(!harness.connection.sent.contains { $0.replySerial == delivered.serial }, "a reply was sent to a call that expects none")
    }
}
