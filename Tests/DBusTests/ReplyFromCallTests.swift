import BusTestSupport
import Synchronization
import Testing

@testable import DBus

/// Replies built from the received call (`dbus_message_new_method_return`,
/// `dbus_message_new_error`; see `ReceivedCall.swift`) read back by libdbus exactly as the
/// same replies built field by field: destination, reply serial, flags, signature, body.
@Suite struct ReplyFromCallTests {
    /// One call the server received, with its reply encoded both ways and decoded again.
    struct Built: Sendable {
        let call: DBusMessage
        /// Whether the call kept the libdbus message it arrived as.
        let keptReceived: Bool
        /// Whether the reply kept the call it answers.
        let replyKeptCall: Bool
        /// The reply built from the call, as libdbus reads it back.
        let fromCall: Result<DBusMessage, DBusError>
        /// The same reply built field by field (detached), as libdbus reads it back.
        let fieldByField: Result<DBusMessage, DBusError>
    }

    /// A private bus whose server answers `/reply` with the reply `make` builds from each call
    /// (`com.example.Error.NotSent` when that reply cannot be sent, or goes to another
    /// destination), and records each call and that reply encoded both ways.
    final class Fixture: Sendable {
        let bus: PrivateBus
        let server: DBusConnection
        let client: DBusConnection
        let recorder = Recorder()

        init(_ make: @escaping @Sendable (DBusMessage) -> DBusMessage) throws {
            bus = try PrivateBus()
            server = try DBusConnection.connect(address: bus.address)
            client = try DBusConnection.connect(address: bus.address)
            let (server, recorder) = (server, recorder)
            try server.registerObject(path: "/reply") { call in
                let reply = make(call)
                func readBack(_ message: DBusMessage) -> Result<DBusMessage, DBusError> {
                    Result { () throws(DBusError) -> DBusMessage in
                        let raw = try MessageEncoder.encode(message)
                        return try MessageDecoder.decode(raw.pointer)
                    }
                }
                recorder.add(
                    Built(
                        call: call, keptReceived: call.received != nil, replyKeptCall: reply.answering != nil,
                        fromCall: readBack(reply), fieldByField: readBack(reply.detached())))
                guard !call.noReplyExpected else { return }
                // Always answered, so no call waits for its time-out: a reply sent elsewhere
                // or refused is replaced by a plain one.
                do throws(DBusError) {
                    guard reply.destination == call.sender else { throw .invalidMessage("readdressed") }
                    try server.send(reply)
                } catch {
                    try? server.send(call.makeError(name: "com.example.Error.NotSent", message: "\(error)"))
                }
            }
        }

        deinit {
            client.close()
            server.close()
            bus.stop()
        }

        func call(_ member: String, _ body: [DBusValue] = []) async throws(DBusError) -> DBusMessage {
            try await client.call(
                .methodCall(destination: server.uniqueName, path: "/reply", interface: "com.example.Reply", member: member, body: body),
                timeout: .seconds(10))
        }

        /// What the server recorded for its only call.
        func only() throws -> Built {
            let all = recorder.all
            try #require(all.count == 1)
            return all[0]
        }
    }

    /// What the server built, in the order of the calls.
    final class Recorder: Sendable {
        private let items = Mutex<[Built]>([])

        func add(_ built: Built) { items.withLock { $0.append(built) } }

        var all: [Built] { items.withLock { $0 } }
    }

    static let bodies: [[DBusValue]] = [
        [], [.variant(.string("a short value"))], [.variant(.int64(-5))], [.boolean(true)],
        [.array(element: "{sv}", [.dictEntry(.string("k"), .variant(.bytes([1, 2])))])],
        [.string("two"), .variant(.double(2.5))],
    ]

    @Test(arguments: bodies)
    func aReturnBuiltFromTheCallReadsBackAsBuiltFieldByField(body: [DBusValue]) async throws {
        let fixture = try Fixture { $0.makeReturn(body) }
        let answer = try await fixture.call("Get", [.string("domain"), .string("key")])
        #expect(answer.body == body)
        let built = try fixture.only()
        #expect(built.keptReceived && built.replyKeptCall)
        let reply = try built.fromCall.get()
        #expect(reply.kind == .methodReturn)
        #expect(reply.destination == fixture.client.uniqueName)
        #expect(reply.destination == built.call.sender)
        #expect(reply.replySerial == built.call.serial && built.call.serial != 0)
        #expect(reply.signature == body.map(\.signatureText).joined())
        #expect(reply.body == body)
        #expect(reply.path == nil && reply.interface == nil && reply.member == nil && reply.errorName == nil)
        expectSame(reply, try built.fieldByField.get())
    }

    @Test func anErrorBuiltFromTheCallReadsBackAsBuiltFieldByField() async throws {
        let fixture = try Fixture { $0.makeError(name: "com.example.Error.NotFound", message: "no key \"k\" ✓") }
        await #expect {
            _ = try await fixture.call("Get")
        } throws: { error in
            guard let error = error as? DBusError, error.code == .remote, let name = error.name else { return false }
            let message = error.message
            return name == "com.example.Error.NotFound" && message == "no key \"k\" ✓"
        }
        let built = try fixture.only()
        #expect(built.replyKeptCall)
        let reply = try built.fromCall.get()
        #expect(reply.kind == .error)
        #expect(reply.errorName == "com.example.Error.NotFound")
        #expect(reply.errorMessage == "no key \"k\" ✓")
        #expect(reply.signature == "s")
        #expect(reply.destination == fixture.client.uniqueName)
        #expect(reply.replySerial == built.call.serial)
        expectSame(reply, try built.fieldByField.get())
    }

    @Test func anInvalidErrorNameIsRefusedNotHandedToLibdbus() async throws {
        // libdbus aborts the process on an invalid error name in dbus_message_new_error.
        let fixture = try Fixture { $0.makeError(name: "not an error name", message: "x") }
        _ = try? await fixture.call("Get")
        let built = fixture.recorder.all
        try #require(!built.isEmpty)
        for result in [built[0].fromCall, built[0].fieldByField] {
            guard case .failure(let error) = result, error.code == .invalidMessage else {
                Issue.record("an invalid error name was not refused: \(result)")
                continue
            }
            let reason = error.message
            #expect(reason.contains("not a valid error name"))
        }
    }

    @Test func aReplyReaddressedAfterMakeReturnGoesWhereItSays() async throws {
        let fixture = try Fixture { call in
            var reply = call.makeReturn([.int32(1)])
            reply.destination = ":1.4242"
            reply.replySerial = 77
            return reply
        }
        _ = try? await fixture.call("Get")
        let reply = try #require(fixture.recorder.all.first).fromCall.get()
        #expect(reply.destination == ":1.4242")
        #expect(reply.replySerial == 77)
        #expect(reply.body == [.int32(1)])
    }

    @Test func aCallWithoutReplyKeepsNoMessageAndDetachedDropsIt() async throws {
        let fixture = try Fixture { $0.makeReturn() }
        var quiet = DBusMessage.methodCall(destination: fixture.server.uniqueName, path: "/reply", interface: "com.example.Reply", member: "Quiet")
        quiet.noReplyExpected = true
        try fixture.client.send(quiet)
        // The sentinel: calls from one connection arrive in order.
        _ = try await fixture.call("Get")
        let built = fixture.recorder.all
        try #require(built.count == 2)
        #expect(built[0].call.member == "Quiet" && !built[0].keptReceived)
        #expect(built[1].keptReceived)
        #expect(built[1].call.detached().received == nil)
        #expect(built[1].call.detached().makeReturn().answering == nil)
    }

    @Test func messagesBuiltHereCarryNoCall() {
        let call = DBusMessage.methodCall(destination: ":1.1", path: "/a", interface: "a.b", member: "M")
        #expect(call.received == nil)
        #expect(call.makeReturn().answering == nil)
        #expect(call.makeError(name: "a.b.E", message: "m").answering == nil)
    }

    private func expectSame(_ a: DBusMessage, _ b: DBusMessage, sourceLocation: SourceLocation = #_sourceLocation) {
        #expect(a.kind == b.kind, sourceLocation: sourceLocation)
        #expect(a.serial == b.serial, sourceLocation: sourceLocation)
        #expect(a.replySerial == b.replySerial, sourceLocation: sourceLocation)
        #expect(a.path == b.path, sourceLocation: sourceLocation)
        #expect(a.interface == b.interface, sourceLocation: sourceLocation)
        #expect(a.member == b.member, sourceLocation: sourceLocation)
        #expect(a.errorName == b.errorName, sourceLocation: sourceLocation)
        #expect(a.destination == b.destination, sourceLocation: sourceLocation)
        #expect(a.sender == b.sender, sourceLocation: sourceLocation)
        #expect(a.noReplyExpected == b.noReplyExpected, sourceLocation: sourceLocation)
        #expect(a.autoStart == b.autoStart, sourceLocation: sourceLocation)
        #expect(a.signature == b.signature, sourceLocation: sourceLocation)
        #expect(a.body == b.body, sourceLocation: sourceLocation)
    }
}
