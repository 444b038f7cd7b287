import BusTestSupport
import Foundation
import Synchronization
import Testing

@testable import DBus

@Suite struct SignalTests {
    static let rule = "type='signal',interface='com.example.Sig',member='Changed',arg0='mine'"

    @Test func matchRuleWithArg0() async throws {
        let fixture = try EchoFixture()
        let matching = Collector()
        let other = Collector()
        let listener = try DBusConnection.connect(address: fixture.bus.address)
        defer { listener.close() }
        listener.setSignalHandler { matching.add($0) }
        fixture.client.setSignalHandler { other.add($0) }
        try await listener.addMatch(Self.rule)

        try fixture.server.send(.signal(path: "/echo", interface: "com.example.Sig", member: "Changed", body: [.string("theirs")]))
        try fixture.server.send(.signal(path: "/echo", interface: "com.example.Sig", member: "Changed", body: [.string("mine"), .int32(1)]))

        let hit = await matching.wait { $0.member == "Changed" }
        #expect(hit?.0.body == [.string("mine"), .int32(1)])
        #expect(hit?.0.sender == fixture.server.uniqueName)
        #expect(hit?.0.path == "/echo")
        // Sent before "mine", so it would have arrived first.
        #expect(!matching.all.contains { $0.0.body.first == .string("theirs") })
        // A connection without the match rule gets no broadcast signal: a signal sent to it
        // directly after the broadcast arrives after it would have (one sender, one order).
        try fixture.server.send(Self.sentinel(to: fixture.client.uniqueName, 1))
        #expect(await other.wait { $0.member == "Sentinel" } != nil, "the sentinel never arrived")
        #expect(!other.all.contains { $0.0.member == "Changed" })

        try await listener.removeMatch(Self.rule)
        try fixture.server.send(.signal(path: "/echo", interface: "com.example.Sig", member: "Changed", body: [.string("mine"), .int32(2)]))
        // The sentinel, sent to the listener directly after that signal, arrives after it would have.
        try fixture.server.send(Self.sentinel(to: listener.uniqueName, 2))
        #expect(await matching.wait { $0.member == "Sentinel" && $0.body == [.int32(2)] } != nil, "the sentinel never arrived")
        #expect(!matching.all.contains { $0.0.body.last == .int32(2) && $0.0.member == "Changed" })
    }

    /// A signal addressed to one connection, which needs no match rule: sent after the
    /// signals under test, it arrives after them.
    static func sentinel(to destination: String, _ number: Int32) -> DBusMessage {
        var message = DBusMessage.signal(path: "/echo", interface: "com.example.Sig", member: "Sentinel", body: [.int32(number)])
        message.destination = destination
        return message
    }

    @Test func signalFromAnotherThreadWhileIdleArrivesPromptly() async throws {
        let fixture = try EchoFixture()
        let received = Collector()
        fixture.client.setSignalHandler { received.add($0) }
        try await fixture.client.addMatch("type='signal',interface='com.example.Sig'")
        for round in 0..<3 {
            // Let both connections go idle.
            try await Task.sleep(for: .milliseconds(300))
            let sentAt = Mutex(ContinuousClock.now)
            let server = fixture.server
            let thread = Thread {
                sentAt.withLock { $0 = .now }
                try? server.send(.signal(path: "/echo", interface: "com.example.Sig", member: "Tick", body: [.int32(Int32(round))]))
            }
            thread.start()
            // The flaw this guards against held a signal until some other message came, and
            // none comes here: arriving at all is the proof (10 s only bounds a stalled machine).
            let hit = await received.wait(timeout: .seconds(10)) { $0.body == [.int32(Int32(round))] }
            let arrived = try #require(hit, "round \(round): the signal sent while idle never arrived").1
            print("dbus.idle_signal round=\(round) latency=\(arrived - sentAt.withLock { $0 })")
        }
    }

    @Test func disconnectHandlerFiresWhenTheBusDies() async throws {
        let bus = try PrivateBus()
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let fired = Mutex(0)
        connection.setDisconnectHandler { fired.withLock { $0 += 1 } }
        bus.stop()
        let deadline = ContinuousClock.now + .seconds(5)
        while fired.withLock({ $0 }) == 0 && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(throws: DBusError.self) { try connection.send(.signal(path: "/a", interface: "a.b", member: "C")) }
        await #expect(throws: DBusError.self) {
            _ = try await connection.call(
                .methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Peer", member: "Ping"))
        }
        // Once, even after the connection was used again while gone.
        #expect(fired.withLock { $0 } == 1)
    }
}
