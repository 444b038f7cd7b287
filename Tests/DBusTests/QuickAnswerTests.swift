import BusTestSupport
import Synchronization
import Testing

@testable import DBus

/// An object's quick answer (``DBusConnection/registerObject(path:quickAnswer:handler:)``)
/// through a real dbus-daemon: it reads the call where libdbus received it (member,
/// interface, signature, sender, string arguments), its body reaches the caller as the
/// reply, and every call it does not answer, or is not offered, reaches the handler.
@Suite struct QuickAnswerTests {
    /// What the quick answer saw of one call.
    struct Seen: Sendable, Equatable {
        var isGet: Bool
        var sender: String?
        var arguments: [String]?
    }

    /// A server whose object at `/quick` answers `com.example.Quick.Get(ss)` quickly when its
    /// first argument is "quick", and hands everything else to a handler that answers with
    /// the member's name.
    /// What the object saw: the quick answer's calls and the handler's members, in order.
    final class Log: Sendable {
        let seen = Mutex<[Seen]>([])
        let handled = Mutex<[String]>([])
    }

    final class Fixture: Sendable {
        let bus: PrivateBus
        let server: DBusConnection
        let client: DBusConnection
        let log = Log()

        init() throws {
            bus = try PrivateBus()
            server = try DBusConnection.connect(address: bus.address)
            client = try DBusConnection.connect(address: bus.address)
            let answer = try ReplyBody([.variant(.string("quick answer"))])
            try server.registerObject(
                path: "/quick",
                quickAnswer: { [log] call in
                    let isGet = call.isCall(member: "Get", interface: "com.example.Quick", signature: "ss")
                    let arguments = call.twoStringArguments()
                    log.seen.withLock { $0.append(Seen(isGet: isGet, sender: call.sender, arguments: arguments.map { [$0.0, $0.1] })) }
                    return isGet && arguments?.0 == "quick" ? answer : nil
                },
                handler: { [server, log] call in
                    log.handled.withLock { $0.append(call.member ?? "") }
                    try? server.send(call.makeReturn([.string("handled \(call.member ?? "")")]))
                })
        }

        func call(_ member: String, interface: String? = "com.example.Quick", _ body: [DBusValue] = [], noReply: Bool = false)
            async throws -> DBusMessage?
        {
            var message = DBusMessage.methodCall(destination: server.uniqueName, path: "/quick", interface: interface, member: member, body: body)
            if noReply {
                message.noReplyExpected = true
                try client.send(message)
                return nil
            }
            return try await client.call(message, timeout: .seconds(10))
        }

        deinit {
            client.close()
            server.close()
            bus.stop()
        }
    }

    @Test func aCallTheQuickAnswerAnswersGetsItsBodyAndNeverReachesTheHandler() async throws {
        let fixture = try Fixture()
        let reply = try #require(try await fixture.call("Get", [.string("quick"), .string("key é")]))
        #expect(reply.kind == .methodReturn)
        #expect(reply.body == [.variant(.string("quick answer"))])
        #expect(reply.destination == fixture.client.uniqueName && reply.sender == fixture.server.uniqueName)
        #expect(fixture.log.seen.withLock { $0 } == [Seen(isGet: true, sender: fixture.client.uniqueName, arguments: ["quick", "key é"])])
        #expect(fixture.log.handled.withLock { $0 }.isEmpty)
    }

    @Test func aCallTheQuickAnswerLeavesIsDecodedAndHandled() async throws {
        let fixture = try Fixture()
        #expect(try await fixture.call("Get", [.string("slow"), .string("key")])?.body == [.string("handled Get")])
        #expect(try await fixture.call("Other", [.string("quick"), .string("key")])?.body == [.string("handled Other")])
        #expect(try await fixture.call("Get", [.string("quick"), .int32(1)])?.body == [.string("handled Get")])
        #expect(try await fixture.call("Get", interface: "com.example.Elsewhere", [.string("quick"), .string("key")])?.body == [.string("handled Get")])
        #expect(fixture.log.handled.withLock { $0 } == ["Get", "Other", "Get", "Get"])
        let seen = fixture.log.seen.withLock { $0 }
        #expect(seen.map(\.isGet) == [true, false, false, false])
        #expect(seen.map(\.arguments) == [["slow", "key"], ["quick", "key"], nil, ["quick", "key"]])
    }

    @Test func aCallNamingNoInterfaceIsTheObjectsMethod() async throws {
        let fixture = try Fixture()
        let reply = try await fixture.call("Get", interface: nil, [.string("quick"), .string("key")])
        #expect(reply?.body == [.variant(.string("quick answer"))])
        #expect(fixture.log.handled.withLock { $0 }.isEmpty)
    }

    @Test func aCallThatWantsNoReplyGoesToTheHandlerWithoutBeingOffered() async throws {
        let fixture = try Fixture()
        _ = try await fixture.call("Get", [.string("quick"), .string("unanswered")], noReply: true)
        // The sentinel, sent after it on the same connection, is handled after it.
        #expect(try await fixture.call("Sentinel")?.body == [.string("handled Sentinel")])
        #expect(fixture.log.handled.withLock { $0 } == ["Get", "Sentinel"])
        // Only the sentinel was offered.
        #expect(fixture.log.seen.withLock { $0 }.map(\.isGet) == [false])
    }

    @Test func aDecodedCallReadsAsTheReceivedOne() {
        var message = DBusMessage.methodCall(
            destination: ":1.1", path: "/quick", interface: nil, member: "Get", body: [.string("a"), .string("b"), .int32(3)])
        message.sender = ":1.7"
        let call = IncomingCall(message)
        // Read into values first: a noncopyable call cannot be captured by #expect.
        let matches = [
            call.isCall(member: "Get", interface: "com.example.Quick", signature: "ssi"),
            call.isCall(member: "Get", interface: "com.example.Quick", signature: "ss"),
            call.isCall(member: "Set", interface: "com.example.Quick", signature: "ssi"),
        ]
        let (sender, arguments) = (call.sender, call.twoStringArguments().map { [$0.0, $0.1] })
        #expect(matches == [true, false, false])
        #expect(sender == ":1.7")
        #expect(arguments == ["a", "b"])
        let oneString = IncomingCall(.methodCall(destination: nil, path: "/", interface: "x.Y", member: "Get", body: [.string("a")]))
        let oneStringArguments = oneString.twoStringArguments().map { [$0.0, $0.1] }
        #expect(oneStringArguments == nil)
        let otherInterface = IncomingCall(.methodCall(destination: nil, path: "/", interface: "x.Y", member: "Get"))
        let otherInterfaceMatches = otherInterface.isCall(member: "Get", interface: "x.Z", signature: "")
        #expect(!otherInterfaceMatches)
    }
}
