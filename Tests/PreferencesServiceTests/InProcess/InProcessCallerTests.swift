import DBus
import PreferencesModel
import PreferencesProtocol
import ServiceTestSupport
import Testing

/// Who is calling: the service asks the bus driver once per sender, before its first call
/// runs, and answers by what it learns.
@Suite("Callers, in process")
struct InProcessCallerTests {
    @Test("the bus driver is asked once per sender, before the sender's first call runs")
    func askedOncePerSender() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        var client = InProcessClient(connection: harness.connection)
        try await client.write("com.example.App", "a", .integer(1))
        try await client.write("com.example.App", "b", .integer(2))
        client.sender = ":1.200"
        #expect(try await client.readDomain("com.example.App") == ["a": .integer(1), "b": .integer(2)])
        #expect(harness.connection.processIDQueries == [InMemoryConnection.defaultSender, ":1.200"])
    }

    @Test("a sender that left before the bus said which process it was runs as the host's on the main name")
    func departedSender() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        harness.connection.answerProcessID(
            of: ":1.300", with: .failure(.remote(name: StandardErrorName.nameHasNoOwner, message: "the name :1.300 has left")))
        var client = InProcessClient(connection: harness.connection)
        client.sender = ":1.300"
        try await client.write("com.example.App", "k", .integer(1))
        #expect(try await client.readValue("com.example.App", "k") == .integer(1))
    }

    @Test("a sender the bus cannot place is answered AccessDenied, whatever it calls")
    func unidentifiedSender() async throws {
        let harness = try InProcessService()
        defer { harness.stop() }
        harness.connection.answerProcessID(of: ":1.400", with: .failure(.remote(name: "org.freedesktop.DBus.Error.Failed", message: "no")))
        var client = InProcessClient(connection: harness.connection)
        client.sender = ":1.400"
        let accessDenied = PreferencesErrorName.accessDenied.busName
        #expect(await client.refusal("Read", [.string("com.example.App"), .string("k")]) == accessDenied)
        #expect(await client.refusal("Write", [.string("com.example.App"), .string("k"), .variant(.int32(1))]) == accessDenied)
        #expect(harness.connection.signals.isEmpty)
    }
}
