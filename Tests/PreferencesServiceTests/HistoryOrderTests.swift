import DBus
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// `History` is read off the connection's queue, after the changes accepted before it are
/// durable: a caller's own earlier writes are in its answer even when it did not wait for
/// their replies.
@Suite("History: order with a caller's writes")
struct HistoryOrderTests {
    @Test("writes sent without waiting, then History on the same connection: every write is in the answer")
    func historyAfterUnansweredWrites() async throws {
        let fixture = try await ServiceFixture()
        let connection = try fixture.connect()
        defer { connection.close() }
        let domain = "com.example.Order"
        for number in 1...20 {
            var write = PreferencesCall.write(domain, "k", .integer(Int64(number))).message
            write.noReplyExpected = true
            try connection.send(write)
        }
        let entries = try PreferencesCall.history(domain).reply(
            try await connection.call(PreferencesCall.history(domain).message).body)
        #expect(entries.map(\.value) == (1...20).map { PropertyListValue.integer(Int64($0)) })
    }
}
