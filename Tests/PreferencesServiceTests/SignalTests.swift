import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Synchronization
import Testing

@Suite("The Changed signal")
struct SignalTests {
    @Test("a second connection sees each commit once, with only what changed, filtered by arg0")
    func payloads() async throws {
        let fixture = try await ServiceFixture()
        let writer = ServiceClient(connection: try fixture.connect())
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: ["com.example.Watched"])

        try await writer.write("com.example.Watched", "a", .integer(1))
        try await writer.write("com.example.Other", "a", .integer(1))  // filtered out by arg0
        try await writer.write("com.example.Watched", "a", .integer(1))  // no change: no signal
        try await writer.call(
            "Apply",
            [
                .string("com.example.Watched"), ServiceClient.values(["a": .integer(1), "b": .string("x")]), .stringArray([]),
            ])
        try await writer.call("Remove", [.string("com.example.Watched"), .string("a")])
        try await writer.call("Remove", [.string("com.example.Watched"), .string("a")])  // absent: no signal
        try await writer.call("ReplaceDomain", [.string("com.example.Watched"), ServiceClient.values(["c": .boolean(true)])])
        try await writer.call("RemoveDomain", [.string("com.example.Watched")])
        // A sentinel change last: signals arrive in commit order, so once it is here every
        // signal the calls above could have caused is here too.
        try await writer.write("com.example.Watched", "sentinel", .integer(1))
        try await watcher.wait(for: 6)

        let signals = watcher.signals
        #expect(signals.count == 6)
        guard signals.count == 6 else { return }
        #expect(signals[5].changed == ["sentinel": .integer(1)], "the sentinel is not last: \(signals)")
        #expect(signals.allSatisfy { $0.domain == "com.example.Watched" })
        #expect(signals[0].changed == ["a": .integer(1)] && signals[0].removed == [])
        #expect(signals[1].changed == ["b": .string("x")] && signals[1].removed == [])
        #expect(signals[2].changed == [:] && signals[2].removed == ["a"])
        #expect(signals[3].changed == ["c": .boolean(true)] && signals[3].removed == ["b"])
        #expect(signals[4].changed == [:] && signals[4].removed == ["c"])
    }

    @Test("the signal arrives before the writer's reply")
    func signalBeforeReply() async throws {
        let fixture = try await ServiceFixture()
        let connection = try fixture.connect()
        let watcher = try await ChangedCollector(connection: connection, domains: ["com.example.Self"])
        for index in 0..<20 {
            let reply = try await connection.call(PreferencesCall.write("com.example.Self", "n", .integer(Int64(index))).message)
            // The collector hears of the signal on the proxy's own queue, so compare the
            // order prefsd sent them in: the signal's serial comes before the reply's.
            try await watcher.wait(for: index + 1)
            let signal = try #require(watcher.signals.count == index + 1 ? watcher.signals.last : nil)
            #expect(signal.changed == ["n": .integer(Int64(index))])
            #expect(signal.serial < reply.serial, "the reply (\(reply.serial)) was sent before the signal (\(signal.serial))")
        }
    }

    @Test("writes in flight together: each Changed carries exactly what its own commit changed")
    func overlappingWritesInFlight() async throws {
        let fixture = try await ServiceFixture()
        let connection = try fixture.connect()
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: ["com.example.Flight"])
        for round in 0..<10 {
            _ = try await connection.call(PreferencesCall.write("com.example.Flight", "k", .integer(0)).message)
            // Sent without waiting, so the second is staged while the first is still being
            // committed: guessed against the stored k = 0, the second would change only j;
            // committed after the first (k = 1), it changes k back as well.
            try connection.send(PreferencesCall.write("com.example.Flight", "k", .integer(1)).message)
            try connection.send(PreferencesCall.apply("com.example.Flight", set: ["k": .integer(0), "j": .integer(Int64(round))], remove: []).message)
            _ = try await connection.call(PreferencesCall.write("com.example.Flight", "sentinel", .integer(Int64(round))).message)
            // Four signals in the first round, three in each later one (k is 0 already).
            try await watcher.wait(for: 4 + 3 * round)
        }
        let signals = watcher.signals
        // Per round: k = 0 (a change in the first round only), k = 1, {k = 0, j}, the sentinel.
        let changes = signals.map(\.changed)
        var expected: [[String: PropertyListValue]] = []
        for round in 0..<10 {
            if round == 0 { expected.append(["k": .integer(0)]) }
            expected += [["k": .integer(1)], ["k": .integer(0), "j": .integer(Int64(round))], ["sentinel": .integer(Int64(round))]]
        }
        #expect(changes == expected)
    }
}
