import DBus
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

@Suite("Apply and ApplyIf")
struct ApplyTests {
    private let invalidArgs = StandardErrorName.invalidArgs

    private func apply(_ client: ServiceClient, _ domain: String, set: DBusValue, remove: [String]) async -> String? {
        await client.refusal("Apply", [.string(domain), set, .stringArray(remove)])
    }

    @Test("an Apply naming one key twice, or two spellings of it, is refused and changes nothing")
    func duplicateKeys() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.Dup", "caf\u{E9}", .integer(1))
        let decomposed = "cafe\u{301}"
        #expect(await apply(client, "com.example.Dup", set: ServiceClient.values([:]), remove: ["caf\u{E9}", "caf\u{E9}"]) == invalidArgs)
        #expect(await apply(client, "com.example.Dup", set: ServiceClient.values([:]), remove: ["caf\u{E9}", decomposed]) == invalidArgs)
        let twoSpellings = DBusValue.array(
            element: .stringVariantEntry,
            [
                .dictEntry(.string("caf\u{E9}"), .variant(.int64(2))), .dictEntry(.string(decomposed), .variant(.int64(3))),
            ])
        #expect(await apply(client, "com.example.Dup", set: twoSpellings, remove: []) == invalidArgs)
        #expect(try await client.readDomain("com.example.Dup") == ["caf\u{E9}": .integer(1)])
    }

    @Test("repeated duplicate removals cannot push the domain past its quota")
    func duplicatesDoNotCheatTheQuota() async throws {
        let fixture = try await ServiceFixture(arguments: ["--max-domain-size", "4096"])
        let client = ServiceClient(connection: try fixture.connect())
        let chunk = PropertyListValue.string(String(repeating: "q", count: 1500))
        try await client.write("com.example.Quota", "a", chunk)
        for _ in 0..<5 {
            _ = await apply(client, "com.example.Quota", set: ServiceClient.values(["a": chunk]), remove: ["b", "b"])
            _ = await apply(client, "com.example.Quota", set: ServiceClient.values([:]), remove: ["a", "a"])
            try await client.write("com.example.Quota", "a", chunk)
        }
        try await client.write("com.example.Quota", "b", chunk)
        let refusal = await client.refusal("Write", [.string("com.example.Quota"), .string("c"), chunk.dbusVariant])
        #expect(refusal == PreferencesErrorName.quotaExceeded.busName, "three 1.5 KB values pass a 4 KB domain")
    }

    @Test("ApplyIf applies only while what it expects holds")
    func applyIf() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: ["com.example.Cas"])
        try await client.write("com.example.Cas", "Recent", .array([.string("a")]))

        func applyIf(expected: [String: PropertyListValue], absent: [String], set: [String: PropertyListValue], remove: [String]) async throws -> Bool {
            let answer = try await client.call(
                "ApplyIf",
                [
                    .string("com.example.Cas"), ServiceClient.values(expected), .stringArray(absent),
                    ServiceClient.values(set), .stringArray(remove),
                ])
            guard case .boolean(let applied)? = answer.first else { throw FixtureError("ApplyIf answered \(answer)") }
            return applied
        }

        // A rename: Old holds what was read and New is absent.
        #expect(
            try await applyIf(
                expected: ["Recent": .array([.string("a")])], absent: ["Renamed"],
                set: ["Renamed": .array([.string("a")])], remove: ["Recent"]))
        #expect(try await client.readDomain("com.example.Cas") == ["Renamed": .array([.string("a")])])
        // A stale expectation changes nothing and says so.
        #expect(try await applyIf(expected: ["Renamed": .array([.string("b")])], absent: [], set: ["Renamed": .integer(0)], remove: []) == false)
        #expect(try await applyIf(expected: [:], absent: ["Renamed"], set: ["X": .integer(0)], remove: []) == false)
        #expect(try await client.readDomain("com.example.Cas") == ["Renamed": .array([.string("a")])])
        // Contradictions and bad arguments are refused as Apply's are.
        let contradiction = await client.refusal(
            "ApplyIf",
            [
                .string("com.example.Cas"), ServiceClient.values(["k": .integer(1)]), .stringArray(["k"]),
                ServiceClient.values([:]), .stringArray([]),
            ])
        #expect(contradiction == invalidArgs)
        try await client.write("com.example.Cas", "sentinel", .boolean(true))
        try await watcher.wait(for: 3)
        // Write, the rename, the sentinel: the refused and declined calls emitted nothing.
        #expect(watcher.signals.count == 3)
        #expect(watcher.signals.last?.changed == ["sentinel": .boolean(true)])
    }
}
