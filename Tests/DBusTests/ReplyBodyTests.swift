import BusTestSupport
import Testing

@testable import DBus

/// Replies made from a body encoded ahead (``ReplyBody``: a kept libdbus message copied
/// and addressed per call) reach the caller through a real dbus-daemon with the same
/// meaning as the same replies built argument by argument: destination, reply serial,
/// flags, signature, body.
@Suite struct ReplyBodyTests {
    /// Every kind of value a body can hold, each alone in a variant as `Read` answers it,
    /// and a few bodies of several arguments.
    static let bodies: [[DBusValue]] = [
        [.variant(.byte(200))], [.variant(.boolean(true))], [.variant(.boolean(false))], [.variant(.int16(-3))],
        [.variant(.uint16(65535))], [.variant(.int32(-70000))], [.variant(.uint32(4_000_000_000))],
        [.variant(.int64(Int64.min))], [.variant(.uint64(UInt64.max))], [.variant(.double(-0.25))],
        [.variant(.string(""))], [.variant(.string("héllo ✓"))], [.variant(.string(String(repeating: "x", count: 5000)))],
        [.variant(.objectPath("/a/b"))], [.variant(.signature("a{sv}"))], [.variant(.bytes([]))], [.variant(.bytes([0, 1, 255]))],
        [.variant(.array(element: "v", []))],
        [.variant(.array(element: "v", [.variant(.int64(1)), .variant(.string("two")), .variant(.array(element: "v", []))]))],
        [.variant(.array(element: "{sv}", [.dictEntry(.string("k"), .variant(.bytes([1, 2])))]))],
        [.variant(.structure([.double(1_700_000_000.5)]))], [.variant(.variant(.int32(7)))],
        [], [.string("two"), .variant(.double(2.5))],
    ]

    @Test(arguments: bodies)
    func aReplyFromAnEncodedBodyReadsBackAsBuiltArgumentByArgument(body: [DBusValue]) async throws {
        let encoded = try ReplyBody(body)
        #expect(encoded.values == body)
        #expect(encoded.marshalledSize == DBusValue.structure(body).marshalledSize)
        let fixture = try ReplyFromCallTests.Fixture { $0.makeReturn(encoded) }
        let answer = try await fixture.call("Get", [.string("domain"), .string("key")])
        // Through the daemon, as the caller reads it.
        #expect(answer.kind == .methodReturn)
        #expect(answer.body == body)
        #expect(answer.signature == body.map(\.signatureText).joined())
        #expect(answer.destination == fixture.client.uniqueName)
        #expect(answer.sender == fixture.server.uniqueName)
        let built = try fixture.only()
        #expect(built.replyKeptCall)
        let reply = try built.fromCall.get()
        let plain = try built.fieldByField.get()
        #expect(reply.destination == built.call.sender && reply.destination == plain.destination)
        #expect(reply.replySerial == built.call.serial && reply.replySerial == plain.replySerial)
        #expect(reply.noReplyExpected == plain.noReplyExpected && reply.autoStart == plain.autoStart)
        #expect(reply.path == nil && reply.interface == nil && reply.member == nil && reply.errorName == nil)
        #expect(reply.signature == plain.signature)
        #expect(reply.body == plain.body && reply.body == body)
    }

    @Test func oneEncodedBodyAnswersManyCallsEachToItsCaller() async throws {
        let encoded = try ReplyBody([.variant(.int64(1))])
        let fixture = try ReplyFromCallTests.Fixture { $0.makeReturn(encoded) }
        let other = try DBusConnection.connect(address: fixture.bus.address)
        defer { other.close() }
        for round in 0..<3 {
            let first = try await fixture.call("Get")
            let second = try await other.call(
                .methodCall(destination: fixture.server.uniqueName, path: "/reply", interface: "com.example.Reply", member: "Get"),
                timeout: .seconds(10))
            #expect(first.body == [.variant(.int64(1))] && second.body == [.variant(.int64(1))], "round \(round)")
            #expect(first.destination == fixture.client.uniqueName && second.destination == other.uniqueName)
        }
        for built in fixture.recorder.all {
            let reply = try built.fromCall.get()
            #expect(reply.replySerial == built.call.serial && reply.destination == built.call.sender)
        }
    }

    @Test func aReplyChangedAfterItWasMadeCarriesWhatItSays() async throws {
        let encoded = try ReplyBody([.variant(.string("old"))])
        let fixture = try ReplyFromCallTests.Fixture { call in
            var reply = call.makeReturn(encoded)
            switch call.member {
            case "Body": reply.body = [.variant(.string("new"))]
            case "Append": reply.body.append(.int32(2))
            case "Readdress":
                reply.destination = ":1.4242"
                reply.replySerial = 77
            default: break
            }
            return reply
        }
        #expect(try await fixture.call("Body").body == [.variant(.string("new"))])
        #expect(try await fixture.call("Append").body == [.variant(.string("old")), .int32(2)])
        _ = try? await fixture.call("Readdress")
        let readdressed = try #require(fixture.recorder.all.last).fromCall.get()
        #expect(readdressed.destination == ":1.4242" && readdressed.replySerial == 77)
        #expect(readdressed.body == [.variant(.string("old"))])
    }

    @Test func aConnectionRepliesWithAnEncodedBodyWithoutAMessageInBetween() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let server = try DBusConnection.connect(address: bus.address)
        let client = try DBusConnection.connect(address: bus.address)
        defer {
            client.close()
            server.close()
        }
        let encoded = try ReplyBody([.variant(.string("kept"))])
        try server.registerObject(path: "/reply") { [server] call in try? server.reply(to: call, with: encoded) }
        let other = try DBusConnection.connect(address: bus.address)
        defer { other.close() }
        for caller in [client, other, client] {
            let answer = try await caller.call(
                .methodCall(destination: server.uniqueName, path: "/reply", interface: "com.example.Reply", member: "Get"),
                timeout: .seconds(10))
            #expect(answer.kind == .methodReturn && answer.body == [.variant(.string("kept"))])
            #expect(answer.destination == caller.uniqueName && answer.sender == server.uniqueName)
        }
    }

    @Test func aBodyLibdbusWouldRefuseIsRefusedWhenEncoded() {
        #expect(throws: DBusError.self) { try ReplyBody([.objectPath("not a path")]) }
        #expect(throws: DBusError.self) { try ReplyBody([.string("a\u{0}b")]) }
    }

    @Test func aMessageBuiltHereSendsItsValuesNotTheEncodedBody() throws {
        let encoded = try ReplyBody([.variant(.int64(1))])
        // Not a received call: no call to copy the reply's addressing from.
        var call = DBusMessage.methodCall(destination: ":1.1", path: "/a", interface: "a.b", member: "M")
        call.sender = ":1.9"
        call.serial = 4
        let reply = call.makeReturn(encoded)
        let raw = try MessageEncoder.encode(reply)
        let decoded = try MessageDecoder.decode(raw.pointer)
        #expect(decoded.body == [.variant(.int64(1))])
        #expect(decoded.destination == ":1.9" && decoded.replySerial == 4)
    }
}
