import DBus
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import ServiceTestSupport
import Testing

/// The `Changed` and `VolatileChanged` signals, as a service in the test's own process sends
/// them: read off the in-memory connection in the order they were sent, replies between.
@Suite("The Changed signal, in process")
struct InProcessSignalTests {
    @Test("each commit emits one Changed with only what it changed; a call that changes nothing emits none")
    func payloads() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        let domain = "com.example.Watched"
        try await client.write(domain, "a", .integer(1))
        try await client.write(domain, "a", .integer(1))  // no change
        try await client.call("Apply", [.string(domain), InProcessClient.values(["a": .integer(1), "b": .string("x")]), .stringArray([])])
        try await client.call("Remove", [.string(domain), .string("a")])
        try await client.call("Remove", [.string(domain), .string("a")])  // absent
        try await client.call("ReplaceDomain", [.string(domain), InProcessClient.values(["c": .boolean(true)])])
        try await client.call("RemoveDomain", [.string(domain)])
        // Every reply has come, and each signal goes out before its call's reply.
        #expect(
            harness.connection.signals.compactMap(SentSignal.init) == [
                SentSignal(changed: domain, ["a": .integer(1)]),
                SentSignal(changed: domain, ["b": .string("x")]),
                SentSignal(changed: domain, [:], removed: ["a"]),
                SentSignal(changed: domain, ["c": .boolean(true)], removed: ["b"]),
                SentSignal(changed: domain, [:], removed: ["c"]),
            ])
    }

    @Test("volatile changes emit VolatileChanged, never Changed")
    func volatileSignals() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        try await client.call("SetVolatileDomain", [.string("com.example.V"), InProcessClient.values(["k": .integer(1)])])
        try await client.call("RemoveVolatileDomain", [.string("com.example.V")])
        try await client.write("com.example.V", "k", .integer(2))  // the persistent domain of the same name
        let volatile = PreferencesBus.volatileChangedSignal
        #expect(
            harness.connection.signals.compactMap(SentSignal.init) == [
                SentSignal(changed: "com.example.V", ["k": .integer(1)], member: volatile),
                SentSignal(changed: "com.example.V", [:], removed: ["k"], member: volatile),
                SentSignal(changed: "com.example.V", ["k": .integer(2)]),
            ])
    }

    @Test("RevertKeyTo and RevertTo each emit one Changed with what they put back, before their reply")
    func reverts() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        let domain = "com.example.Undone"
        try await client.write(domain, "a", .integer(1))
        try await client.write(domain, "b", .string("x"))
        try await client.write(domain, "a", .integer(2))
        let first = try #require(try await client.perform(PreferencesCall.history(domain)).first)
        // The key as right after the first change; then the domain as before every change.
        try await client.perform(PreferencesCall.revertKeyTo(domain, key: "a", sequence: first.sequence))
        try await client.perform(PreferencesCall.revertTo(domain, sequence: 0))
        #expect(
            harness.connection.signals.compactMap(SentSignal.init).suffix(2) == [
                SentSignal(changed: domain, ["a": .integer(1)]),
                SentSignal(changed: domain, [:], removed: ["a", "b"]),
            ])
    }

    @Test("a write's Changed is sent before its reply")
    func signalBeforeReply() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        for index in 0..<20 {
            let reply = try await client.send(PreferencesCall.write("com.example.Self", "n", .integer(Int64(index))).message)
            let sent = harness.connection.sent
            let replyAt = try #require(sent.firstIndex { $0.kind == .methodReturn && $0.replySerial == reply.replySerial })
            let signalAt = try #require(sent.lastIndex { SentSignal($0) == SentSignal(changed: "com.example.Self", ["n": .integer(Int64(index))]) })
            #expect(signalAt < replyAt, "write \(index): the reply was sent before the signal")
        }
    }

    @Test("a value too large for the 4 KiB bound is named in invalidated; small ones of the same commit still travel")
    func largeValueInvalidated() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        let big = PropertyListValue.data(.init(repeating: 7, count: 64 * 1024))
        try await client.call("Apply", [.string("com.example.Big"), InProcessClient.values(["blob": big, "small": .integer(1)]), .stringArray([])])
        let signals = harness.connection.signals
        try #require(signals.count == 1)
        let signal = try #require(SentSignal(signals[0]))
        #expect(signal.changed == ["small": .integer(1)])
        #expect(signal.invalidated == ["blob"])
        #expect(DBusValue.structure(signals[0].body).marshalledSize <= 4096)
        #expect(try await client.readValue("com.example.Big", "blob") == big)
    }
}
