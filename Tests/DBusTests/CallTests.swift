import BusTestSupport
import Synchronization
import Testing

@testable import DBus

@Suite struct CallTests {
    @Test func errorReplyThrowsRemote() async throws {
        let fixture = try EchoFixture()
        await #expect {
            _ = try await fixture.call("Fail")
        } throws: { error in
            guard let error = error as? DBusError, error.code == .remote, let name = error.name else { return false }
            let message = error.message
            return name == "com.example.Error.Failed" && message == "it failed"
        }
    }

    @Test func unknownMethodAndUnknownPathAreErrors() async throws {
        let fixture = try EchoFixture()
        await #expect(throws: DBusError.self) { _ = try await fixture.call("NoSuchMethod") }
        // A path nobody registered: libdbus answers by itself.
        await #expect {
            _ = try await fixture.client.call(
                .methodCall(destination: fixture.server.uniqueName, path: "/nowhere", interface: "x.Y", member: "Z"),
                timeout: .seconds(5))
        } throws: { error in
            guard let error = error as? DBusError, error.code == .remote, let name = error.name else { return false }
            return name.hasPrefix("org.freedesktop.DBus.Error.Unknown")
        }
    }

    @Test func peerAndParentIntrospectionAnsweredByLibdbus() async throws {
        let fixture = try EchoFixture()
        let ping = try await fixture.client.call(
            .methodCall(destination: fixture.server.uniqueName, path: "/echo", interface: "org.freedesktop.DBus.Peer", member: "Ping"))
        #expect(ping.kind == .methodReturn)
        let root = try await fixture.client.call(
            .methodCall(destination: fixture.server.uniqueName, path: "/", interface: "org.freedesktop.DBus.Introspectable", member: "Introspect"))
        guard case .string(let xml)? = root.body.first else {
            Issue.record("no XML")
            return
        }
        #expect(xml.contains("<node name=\"echo\""))
    }

    @Test func noReplyTimesOut() async throws {
        let fixture = try EchoFixture()
        let clock = ContinuousClock()
        let start = clock.now
        await #expect {
            _ = try await fixture.call("Ignore", timeout: .milliseconds(300))
        } throws: { error in
            guard let error = error as? DBusError, error.code == .remote, let name = error.name else { return false }
            return name == "org.freedesktop.DBus.Error.NoReply"
        }
        let elapsed = clock.now - start
        #expect(elapsed >= .milliseconds(250))
        #expect(elapsed < .seconds(15), "a timeout that never fires would hang here")
    }

    @Test func manyConcurrentCalls() async throws {
        let fixture = try EchoFixture()
        try await withThrowingTaskGroup(of: Bool.self) { group in
            for index in 0..<120 {  // dbus-daemon allows 128 pending replies per connection
                group.addTask {
                    try await fixture.echo([.int32(Int32(index))]) == [.int32(Int32(index))]
                }
            }
            for try await ok in group { #expect(ok) }
        }
    }

    @Test func requestNameDoNotQueue() async throws {
        let fixture = try EchoFixture()
        #expect(try await fixture.server.requestName("com.example.Echo", flags: 4) == 1)
        #expect(try await fixture.client.requestName("com.example.Echo", flags: 4) == 3)
        #expect(try await fixture.server.requestName("com.example.Echo", flags: 4) == 4)
        // The well-known name routes to the server.
        let reply = try await fixture.client.call(
            .methodCall(destination: "com.example.Echo", path: "/echo", interface: nil, member: "Echo", body: [.string("hi")]))
        #expect(reply.body == [.string("hi")])
        #expect(reply.sender == fixture.server.uniqueName)
    }

    @Test func eachRegisteredPathGetsItsOwnCallsAndOnlyItsExactPath() async throws {
        let fixture = try EchoFixture()
        try fixture.server.registerObject(path: "/echo/child") { [server = fixture.server] call in
            try? server.send(call.makeReturn([.string("child: \(call.member ?? "")")]))
        }
        func call(_ path: String) async throws -> DBusMessage {
            try await fixture.client.call(
                .methodCall(destination: fixture.server.uniqueName, path: path, interface: "com.example.Echo", member: "Echo", body: [.int32(7)]),
                timeout: .seconds(5))
        }
        #expect(try await call("/echo").body == [.int32(7)])
        #expect(try await call("/echo/child").body == [.string("child: Echo")])
        // Paths that only begin or end like a registered one belong to no object.
        for path in ["/ech", "/echo/chil", "/echo/child/more", "/"] {
            await #expect(throws: DBusError.self, "\(path)") { _ = try await call(path) }
        }
    }

    @Test func registeringAPathTwiceThrows() throws {
        let fixture = try EchoFixture()
        #expect(throws: DBusError.self) { try fixture.server.registerObject(path: "/echo") { _ in } }
        #expect(throws: DBusError.self) { try fixture.server.registerObject(path: "a//b") { _ in } }
    }

    @Test func closedConnectionThrowsDisconnected() async throws {
        let fixture = try EchoFixture()
        let connection = try DBusConnection.connect(address: fixture.bus.address)
        connection.close()
        connection.close()
        let sent = #expect(throws: DBusError.self) {
            try connection.send(.signal(path: "/a", interface: "a.b", member: "C"))
        }
        let called = await #expect(throws: DBusError.self) {
            _ = try await connection.call(
                .methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus.Peer", member: "Ping"))
        }
        for error in [sent, called] {
            guard case .disconnected? = error else { Issue.record("expected DBusError.disconnected, got \(String(describing: error))"); continue }
        }
    }

    /// libdbus behaviour worth knowing: a message over the receiver's maximum size makes the
    /// receiver's libdbus drop its own connection to the bus; the caller sees NoReply.
    @Test func oversizedIncomingMessageDisconnectsTheReceiver() async throws {
        let fixture = try EchoFixture()
        let lost = Mutex(false)
        fixture.server.setDisconnectHandler { lost.withLock { $0 = true } }
        fixture.server.setMaximumMessageSize(64 * 1024)
        _ = try await fixture.echo([.bytes(Array(repeating: 1, count: 60_000))])
        await #expect {
            _ = try await fixture.echo([.bytes(Array(repeating: 1, count: 100_000))])
        } throws: { error in
            guard let error = error as? DBusError, error.code == .remote, let name = error.name else { return false }
            return name == "org.freedesktop.DBus.Error.NoReply"
        }
        let deadline = ContinuousClock.now + .seconds(5)
        while !lost.withLock({ $0 }) && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
        #expect(lost.withLock { $0 })
    }

    @Test func connectFailures() throws {
        #expect(throws: DBusError.self) { _ = try DBusConnection.connect(address: "unix:path=/nonexistent/socket") }
        #expect(throws: DBusError.self) { _ = try DBusConnection.connect(address: "") }
    }
}
