import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PreferencesService
import ServiceTestSupport
import Testing

/// The service's size and count limits, served in process with limits small enough to reach.
@Suite("Limits, in process")
struct InProcessLimitsTests {
    private let quotaExceeded = PreferencesErrorName.quotaExceeded.busName

    private static func limits(_ change: (inout ServiceLimits) -> Void) -> ServiceLimits {
        var limits = ServiceLimits.default
        change(&limits)
        return limits
    }

    @Test("a value, a domain or the volatile domains over their limit are QuotaExceeded, and the service answers on")
    func quotas() async throws {
        let harness = try InProcessService(
            limits: Self.limits {
                $0.valueBytes = 10_000
                $0.domainBytes = 30_000
                $0.volatileBytes = 20_000
            })
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        let domain = DBusValue.string("com.example.App")
        #expect(await client.refusal("Write", [domain, .string("big"), PropertyListValue.data(Data(count: 10_001)).dbusVariant]) == quotaExceeded)
        let almost = PropertyListValue.data(Data(count: 9_000))
        try await client.write("com.example.App", "a", almost)
        try await client.write("com.example.App", "b", almost)
        try await client.write("com.example.App", "c", almost)
        #expect(await client.refusal("Write", [domain, .string("d"), almost.dbusVariant]) == quotaExceeded)
        #expect(try await client.readDomain("com.example.App").count == 3)
        let volatile = InProcessClient.values(["x": .data(Data(count: 9_000)), "y": .data(Data(count: 9_000)), "z": .data(Data(count: 9_000))])
        #expect(await client.refusal("SetVolatileDomain", [.string("com.example.V"), volatile]) == quotaExceeded)
        #expect(try await client.volatileDomains() == [])
    }

    @Test("a reply over the reply bound is refused LimitsExceeded instead of sent")
    func replyBound() async throws {
        let harness = try InProcessService(limits: Self.limits { $0.replyBytes = 8_192 })
        defer { harness.stop() }
        let client = InProcessClient(connection: harness.connection)
        for index in 0..<3 { try await client.write("com.example.Wide", "k\(index)", .data(Data(count: 4_000))) }
        #expect(try await client.readValue("com.example.Wide", "k0") == .data(Data(count: 4_000)))
        #expect(await client.refusal("ReadDomain", [.string("com.example.Wide")]) == StandardErrorName.limitsExceeded)
    }

    @Test("calls that arrive before the store is loaded wait and are answered in order once it is; past the bound they are refused at once")
    func waitingCalls() async throws {
        let harness = try InProcessService(limits: Self.limits { $0.waitingCalls = 3 }, start: false)
        defer { harness.stop() }
        let connection = harness.connection
        let first = connection.deliver(PreferencesCall.write("com.example.Early", "a", .integer(1)).message)
        let second = connection.deliver(PreferencesCall.write("com.example.Early", "b", .integer(2)).message)
        let third = connection.deliver(PreferencesCall.domains().message)
        let fourth = connection.deliver(PreferencesCall.domains().message)
        #expect(await Self.reply(to: fourth, on: connection)?.errorName == StandardErrorName.limitsExceeded)
        #expect(connection.sent.count == 1, "a call was answered before the store was loaded: \(connection.sent)")

        try harness.start()
        let replies = [await Self.reply(to: first, on: connection), await Self.reply(to: second, on: connection), await Self.reply(to: third, on: connection)]
        #expect(replies.map { $0?.kind } == [.methodReturn, .methodReturn, .methodReturn])
        let sent = connection.sent
        let order = [first, second].map { call in sent.firstIndex { $0.replySerial == call.serial } ?? -1 }
        #expect(order[0] < order[1], "the held writes were answered out of order")
        let client = InProcessClient(connection: connection)
        #expect(try await client.readDomain("com.example.Early") == ["a": .integer(1), "b": .integer(2)])
    }

    /// The reply to `call`, once it is sent (`nil` after a few seconds without one).
    private static func reply(to call: DBusMessage, on connection: InMemoryConnection) async -> DBusMessage? {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if let reply = connection.sent.first(where: { $0.replySerial == call.serial && $0.kind != .signal }) { return reply }
            try? await Task.sleep(for: .milliseconds(2))
        }
        return nil
    }
}
