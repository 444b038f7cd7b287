import BusTestSupport
import Dispatch
import Synchronization
import Testing

@testable import DBus

/// `callBlocking` sends from the caller's thread and the connection matches replies to calls
/// itself (PendingCall.swift): replies reach the right caller, deadlines fire, closing wakes
/// waiting callers, and one thread's sends and calls keep their order.
@Suite struct BlockingCallTests {
    private static func echo(_ fixture: EchoFixture, _ body: [DBusValue]) -> DBusMessage {
        .methodCall(destination: fixture.server.uniqueName, path: "/echo", interface: "com.example.Echo", member: "Echo", body: body)
    }

    private static func ignored(_ fixture: EchoFixture) -> DBusMessage {
        .methodCall(destination: fixture.server.uniqueName, path: "/echo", interface: "com.example.Echo", member: "Ignore")
    }

    @Test func blockingCallReturnsTheReplyAndErrors() throws {
        let fixture = try EchoFixture()
        let reply = try fixture.client.callBlocking(Self.echo(fixture, [.string("hi"), .int64(7)]))
        #expect(reply.kind == .methodReturn)
        #expect(reply.body == [.string("hi"), .int64(7)])
        #expect {
            try fixture.client.callBlocking(
                .methodCall(destination: fixture.server.uniqueName, path: "/echo", interface: "com.example.Echo", member: "Fail"))
        } throws: { error in
            guard let error = error as? DBusError, error.code == .remote, let name = error.name else { return false }
            let message = error.message
            return name == "com.example.Error.Failed" && message == "it failed"
        }
    }

    @Test func blockingCallTimesOutWithNoReply() throws {
        let fixture = try EchoFixture()
        let start = ContinuousClock.now
        #expect {
            try fixture.client.callBlocking(Self.ignored(fixture), timeout: .milliseconds(300))
        } throws: { error in
            guard let error = error as? DBusError, error.code == .remote, let name = error.name else { return false }
            return name == "org.freedesktop.DBus.Error.NoReply"
        }
        let elapsed = ContinuousClock.now - start
        #expect(elapsed >= .milliseconds(250))
        #expect(elapsed < .seconds(15), "a deadline that never fires would hang here")
    }

    /// One timer serves every deadline: a short deadline after a long one still fires on
    /// time, and the long one is not cut short by it.
    @Test func anEarlierDeadlineFiresWhileALaterOneWaits() async throws {
        let fixture = try EchoFixture()
        let arrived = Collector()
        try fixture.server.registerObject(path: "/hold") { call in arrived.add(call) }
        let beforeLong = ContinuousClock.now
        let long = Task { () -> ContinuousClock.Instant in
            _ = try? await fixture.client.call(
                .methodCall(destination: fixture.server.uniqueName, path: "/hold", interface: "com.example.Hold", member: "Hold"),
                timeout: .seconds(3))
            return ContinuousClock.now
        }
        // Once the server has it, the long call is waiting (recorded when it was sent).
        #expect(await arrived.wait { $0.member == "Hold" } != nil, "the long call never reached the server")
        let start = ContinuousClock.now
        #expect(throws: DBusError.self) {
            try fixture.client.callBlocking(Self.ignored(fixture), timeout: .milliseconds(200))
        }
        let short = ContinuousClock.now - start
        #expect(short < .seconds(2), "the 200 ms deadline waited for the 3 s one (\(short))")
        let longEnded = await long.value
        #expect(longEnded - beforeLong >= .milliseconds(2900), "the 3 s call ended early")
    }

    @Test func manyThreadsGetTheirOwnReplies() throws {
        let fixture = try EchoFixture()
        let wrong = Mutex(0)
        let failures = Mutex<[String]>([])
        DispatchQueue.concurrentPerform(iterations: 8) { thread in
            for index in 0..<200 {
                let value = Int32(thread * 1000 + index)
                do {
                    let reply = try fixture.client.callBlocking(Self.echo(fixture, [.int32(value)]))
                    if reply.body != [.int32(value)] { wrong.withLock { $0 += 1 } }
                } catch {
                    failures.withLock { $0.append("\(error)") }
                }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        #expect(wrong.withLock { $0 } == 0)
    }

    @Test func closingWakesABlockedCaller() async throws {
        let fixture = try EchoFixture()
        let client = try DBusConnection.connect(address: fixture.bus.address)
        let arrived = Collector()
        try fixture.server.registerObject(path: "/hold") { call in arrived.add(call) }
        let outcome = Mutex<Result<DBusMessage, DBusError>?>(nil)
        DispatchQueue.global().async {
            let result = Result { () throws(DBusError) -> DBusMessage in
                try client.callBlocking(
                    .methodCall(destination: fixture.server.uniqueName, path: "/hold", interface: "com.example.Hold", member: "Hold"),
                    timeout: .seconds(60))
            }
            outcome.withLock { $0 = result }
        }
        #expect(await arrived.wait { $0.member == "Hold" } != nil, "the call never reached the server")
        let closed = ContinuousClock.now
        client.close()
        let deadline = closed + .seconds(10)
        while outcome.withLock({ $0 }) == nil && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(5))
        }
        guard case .failure(.disconnected)? = outcome.withLock({ $0 }) else {
            Issue.record("the blocked call ended with \(String(describing: outcome.withLock { $0 })), not .disconnected, within 10 s")
            return
        }
    }

    /// A message sent with `send` and a blocking call made after it on the same thread reach
    /// the peer in that order.
    @Test func oneThreadsSendsAndBlockingCallsKeepTheirOrder() async throws {
        let fixture = try EchoFixture()
        let seen = Mutex<[Int32]>([])
        let server = fixture.server
        try server.registerObject(path: "/order") { call in
            if case .int32(let value)? = call.body.first { seen.withLock { $0.append(value) } }
            if !call.noReplyExpected { try? server.send(call.makeReturn()) }
        }
        func note(_ value: Int32) -> DBusMessage {
            .methodCall(destination: server.uniqueName, path: "/order", interface: "com.example.Order", member: "Note", body: [.int32(value)])
        }
        for round in Int32(0)..<200 {
            var oneWay = note(2 * round)
            oneWay.noReplyExpected = true
            try fixture.client.send(oneWay)
            _ = try fixture.client.callBlocking(note(2 * round + 1))
        }
        #expect(seen.withLock { $0 } == Array(0..<400))
    }
}
