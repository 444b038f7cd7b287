import DBus
import PreferencesModel
import PreferencesProtocol
import ServiceTestSupport
import Testing

/// `Read`s answered before their call is decoded (`PreferencesService+QuickRead.swift`):
/// only a value read before, still stored, for a sender known as the host's; every other
/// `Read` gets the answer of the full path.
@Suite("Quick reads, in process")
struct InProcessQuickReadTests {
    static let domain = "com.example.Quick"

    /// `domain`'s key `k` written and read twice by `client`: its reply is kept, and the
    /// second read answered quickly.
    static func keptReply(_ harness: InProcessService, _ client: InProcessClient) async throws {
        try await client.write(domain, "k", .integer(1))
        for _ in 0..<2 { #expect(try await client.readValue(domain, "k") == .integer(1)) }
        #expect(harness.connection.quicklyAnswered == 1)
    }

    @Test("a Read of a value read before is answered quickly, and a changed value through the full path first")
    func readAgain() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        let domain = Self.domain
        try await client.write(domain, "k", .integer(1))
        #expect(try await client.readValue(domain, "k") == .integer(1))
        #expect(harness.connection.quicklyAnswered == 0)
        #expect(try await client.readValue(domain, "k") == .integer(1))
        #expect(harness.connection.quicklyAnswered == 1)
        try await client.write(domain, "k", .string("two"))
        #expect(try await client.readValue(domain, "k") == .string("two"))
        #expect(harness.connection.quicklyAnswered == 1)
        #expect(try await client.readValue(domain, "k") == .string("two"))
        #expect(harness.connection.quicklyAnswered == 2)
        _ = try await client.call("Remove", [.string(domain), .string("k")])
        #expect(await client.refusal("Read", [.string(domain), .string("k")]) == PreferencesErrorName.notFound.busName)
        #expect(harness.connection.quicklyAnswered == 2)
    }

    @Test("a sender prefsd has not identified as the host's never gets a kept reply")
    func onlyTheHost() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        var client = InProcessClient(connection: harness.connection)
        let domain = Self.domain
        try await Self.keptReply(harness, client)
        harness.connection.answerProcessID(of: ":1.400", with: .failure(.remote(name: "org.freedesktop.DBus.Error.Failed", message: "no")))
        client.sender = ":1.400"
        for _ in 0..<2 {
            #expect(await client.refusal("Read", [.string(domain), .string("k")]) == PreferencesErrorName.accessDenied.busName)
        }
        // A new host sender: identified on its first call, then answered quickly.
        client.sender = ":1.500"
        for _ in 0..<2 { #expect(try await client.readValue(domain, "k") == .integer(1)) }
        #expect(harness.connection.quicklyAnswered == 2)
    }

    @Test("a Read that wants no reply gets none, and changes nothing")
    func noReply() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        let domain = Self.domain
        try await Self.keptReply(harness, client)
        let before = harness.connection.sent.count
        var call = DBusMessage.methodCall(
            destination: nil, path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: "Read",
            body: [.string(domain), .string("k")])
        call.noReplyExpected = true
        harness.connection.deliver(call)
        // The sentinel, delivered after it, is answered after it.
        #expect(try await client.readValue(domain, "k") == .integer(1))
        #expect(harness.connection.sent.count == before + 1)
        #expect(harness.connection.quicklyAnswered == 2)
    }
}
