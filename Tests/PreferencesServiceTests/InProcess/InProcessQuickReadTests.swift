import DBus
import Dispatch
import PreferencesModel
import PreferencesProtocol
import PreferencesService
import ServiceTestSupport
import Testing

/// `Read`s answered before their call is decoded (`PreferencesService+QuickRead.swift`):
/// only a value read before, still stored, for a sender known as the host's; every other
/// `Read` gets the answer of the full path.
///
/// A sender is known once its first calls have run: the gate keeps the answer only after
/// the calls held meanwhile, so a call arriving right after the first reply may still take
/// the full path. The tests read until one `Read` is answered quickly, and from then on
/// count exactly.
@Suite("Quick reads, in process")
struct InProcessQuickReadTests {
    static let domain = "com.example.Quick"

    /// A service with `limits` once its whole store is loaded and it dispatches calls as they
    /// come (before that, every `Read` takes the full path).
    static func loadedService(limits: ServiceLimits = .default) throws -> InProcessService {
        let loaded = DispatchSemaphore(value: 0)
        let harness = try InProcessService(limits: limits, afterLoad: { loaded.signal() })
        guard loaded.wait(timeout: .now() + 10) == .success else {
            harness.stop()
            throw ServiceNotLoaded()
        }
        return harness
    }

    /// The service did not load its store within ten seconds.
    struct ServiceNotLoaded: Error {}

    /// Reads `key` of ``domain`` as `client`, each answer checked against `value`, until one
    /// is answered quickly (at most 50 reads); whether one was.
    static func readUntilQuick(
        _ harness: InProcessService, _ client: InProcessClient, _ key: String = "k", _ value: PropertyListValue = .integer(1)
    ) async throws -> Bool {
        let before = harness.connection.quicklyAnswered
        for _ in 0..<50 {
            #expect(try await client.readValue(domain, key) == value)
            if harness.connection.quicklyAnswered > before { return true }
        }
        return false
    }

    /// A client of `harness` that wrote `k` = 1 and read it until it was answered quickly;
    /// with the count of quick answers then.
    static func keptReply(_ harness: InProcessService) async throws -> (client: InProcessClient, quick: Int) {
        let client = InProcessClient(connection: harness.connection)
        try await client.write(domain, "k", .integer(1))
        #expect(try await readUntilQuick(harness, client))
        return (client, harness.connection.quicklyAnswered)
    }

    @Test("a Read of a value read before is answered quickly, and a changed value through the full path first")
    func readAgain() async throws {
        let harness = try Self.loadedService()
        defer { harness.stop() }
        let (client, quick) = try await Self.keptReply(harness)
        let domain = Self.domain
        try await client.write(domain, "k", .string("two"))
        #expect(try await client.readValue(domain, "k") == .string("two"))
        #expect(harness.connection.quicklyAnswered == quick)
        #expect(try await client.readValue(domain, "k") == .string("two"))
        #expect(harness.connection.quicklyAnswered == quick + 1)
        _ = try await client.call("Remove", [.string(domain), .string("k")])
        #expect(await client.refusal("Read", [.string(domain), .string("k")]) == PreferencesErrorName.notFound.busName)
        #expect(harness.connection.quicklyAnswered == quick + 1)
    }

    @Test("a sender prefsd has not identified as the host's never gets a kept reply")
    func onlyTheHost() async throws {
        let harness = try Self.loadedService()
        defer { harness.stop() }
        var (client, quick) = try await Self.keptReply(harness)
        let domain = Self.domain

        harness.connection.answerProcessID(of: ":1.400", with: .failure(.remote(name: "org.freedesktop.DBus.Error.Failed", message: "no")))
        client.sender = ":1.400"
        for _ in 0..<3 {
            #expect(await client.refusal("Read", [.string(domain), .string("k")]) == PreferencesErrorName.accessDenied.busName)
        }
        #expect(harness.connection.quicklyAnswered == quick)
        // A new host sender: identified on its first call, then answered quickly.
        client.sender = ":1.500"
        #expect(try await Self.readUntilQuick(harness, client))
    }

    @Test("a Read that wants no reply gets none, and changes nothing")
    func noReply() async throws {
        let harness = try Self.loadedService()
        defer { harness.stop() }
        let (client, quick) = try await Self.keptReply(harness)
        let domain = Self.domain
        let sent = harness.connection.sent.count
        var call = DBusMessage.methodCall(
            destination: nil, path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: "Read",
            body: [.string(domain), .string("k")])
        call.noReplyExpected = true
        harness.connection.deliver(call)
        // The sentinel, delivered after it, is answered after it.
        #expect(try await client.readValue(domain, "k") == .integer(1))
        #expect(harness.connection.sent.count == sent + 1)
        #expect(harness.connection.quicklyAnswered == quick + 1)
    }

    @Test("a kept reply over the bound on replies is refused on every Read, as the full path refuses it")
    func overTheReplyBound() async throws {
        var limits = ServiceLimits.default
        limits.replyBytes = 64
        let harness = try Self.loadedService(limits: limits)
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        try await client.write(Self.domain, "long", .string(String(repeating: "x", count: 200)))
        for _ in 0..<5 {
            #expect(await client.refusal("Read", [.string(Self.domain), .string("long")]) == StandardErrorName.limitsExceeded)
        }
        #expect(harness.connection.quicklyAnswered == 0)
    }
}
