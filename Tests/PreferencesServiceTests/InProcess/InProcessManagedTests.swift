import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import ServiceTestSupport
import Testing

/// Forced keys, from managed domains in the service's own directory, served in process.
@Suite("Managed (forced) preferences, in process")
struct InProcessManagedTests {
    private let forced = PreferencesErrorName.forced.busName

    @Test("a forced value wins over the user's, and every call that would change it is Forced and changes nothing")
    func forcedWins() async throws {
        let harness = try InProcessService(managed: ["com.example.Lab": ["Proxy": .string("lab-proxy")]])
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        let domain = DBusValue.string("com.example.Lab")
        #expect(try await client.readValue("com.example.Lab", "Proxy") == .string("lab-proxy"))
        #expect(try await client.call("IsForced", [domain, .string("Proxy")]) == [.boolean(true)])
        #expect(try await client.call("ForcedKeys", [domain]) == [.stringArray(["Proxy"])])
        let lookup = try await client.call("Lookup", [.stringArray(["com.example.Lab", "NSGlobalDomain"]), .string("Proxy")])
        #expect(lookup == [domain, .variant(.string("lab-proxy"))])
        try await client.write("com.example.Lab", "Mine", .integer(1))
        #expect(await client.refusal("Write", [domain, .string("Proxy"), .variant(.string("x"))]) == forced)
        #expect(await client.refusal("Remove", [domain, .string("Proxy")]) == forced)
        #expect(
            await client.refusal("Apply", [domain, InProcessClient.values(["Mine": .integer(2), "Proxy": .string("x")]), .stringArray([])]) == forced)
        #expect(await client.refusal("Apply", [domain, InProcessClient.values([:]), .stringArray(["Proxy"])]) == forced)
        #expect(await client.refusal("ReplaceDomain", [domain, InProcessClient.values(["Proxy": .string("x")])]) == forced)
        let applyIf: [DBusValue] = [
            domain, InProcessClient.values(["Proxy": .string("lab-proxy")]), .stringArray([]),
            InProcessClient.values(["Proxy": .string("x")]), .stringArray([]),
        ]
        #expect(await client.refusal("ApplyIf", applyIf) == forced)
        #expect(try await client.readDomain("com.example.Lab") == ["Proxy": .string("lab-proxy"), "Mine": .integer(1)])
    }

    @Test("a managed file placed and removed while the service runs: ForcedKeysChanged and Changed, and the user's value comes back")
    func liveChanges() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        try await client.write("NSGlobalDomain", "Theme", .string("dark"))

        try harness.place(["Theme": .string("lab")], managedDomain: "NSGlobalDomain")
        let placed = await harness.connection.preferencesSignals(count: 3)
        #expect(
            placed.dropFirst() == [
                SentSignal(forcedKeys: "NSGlobalDomain", ["Theme"]),
                SentSignal(changed: "NSGlobalDomain", ["Theme": .string("lab")]),
            ])
        #expect(try await client.readValue("NSGlobalDomain", "Theme") == .string("lab"))

        try FileManager.default.removeItem(at: harness.managedDirectory.appendingPathComponent("NSGlobalDomain.plist"))
        let removed = await harness.connection.preferencesSignals(count: 5)
        #expect(
            removed.dropFirst(3) == [
                SentSignal(forcedKeys: "NSGlobalDomain", []),
                SentSignal(changed: "NSGlobalDomain", ["Theme": .string("dark")]),
            ])
        #expect(try await client.call("IsForced", [.string("NSGlobalDomain"), .string("Theme")]) == [.boolean(false)])
    }
}

extension SentSignal {
    /// The `ForcedKeysChanged` of `domain` naming `keys`.
    init(forcedKeys domain: String, _ keys: [String]) {
        self.init(changed: domain, [:], removed: keys, member: PreferencesBus.forcedKeysChangedSignal)
    }
}
