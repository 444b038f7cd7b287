import BusTestSupport
import Testing

@testable import DBus

/// Input libdbus would abort on is refused before it gets there; the process survives.
@Suite struct ValidationTests {
    static let invalidBodies: [[DBusValue]] = [
        [.string("a\0b")],
        [.objectPath("a//b")],
        [.objectPath("/a/")],
        [.objectPath("/a\0")],
        [.signature("a{vs}")],
        [.signature("(")],
        [.unixFD],
        [.dictEntry(.string("k"), .int32(1))],
        [.array(element: .string, [.int32(1)])],
        [.array(element: "{vs}", [])],
        [.array(element: "{ss}", [.dictEntry(.int32(1), .string("x"))])],
        [.array(element: "q(", [])],
        [.structure([])],
        [.variant(.dictEntry(.string("k"), .string("v")))],
        [.array(element: .variant, [.variant(.string("ok")), .variant(.string("bad\0"))])],
    ]

    @Test(arguments: invalidBodies)
    func invalidBodyIsRefused(body: [DBusValue]) async throws {
        let fixture = try EchoFixture()
        #expect(throws: DBusError.self) {
            try fixture.client.send(.signal(path: "/a", interface: "a.b", member: "C", body: body))
        }
        await #expect(throws: DBusError.self) { _ = try await fixture.echo(body) }
        // Still connected and working.
        #expect(try await fixture.echo([.string("ok")]) == [.string("ok")])
    }

    @Test func invalidHeadersAreRefused() throws {
        let fixture = try EchoFixture()
        let bad: [DBusMessage] = [
            .signal(path: "a//b", interface: "a.b", member: "C"),
            .signal(path: "/a", interface: "nodots", member: "C"),
            .signal(path: "/a", interface: "a.b", member: "C.D"),
            .signal(path: "/a", interface: "a.b\0", member: "C"),
            .methodCall(destination: "not a name", path: "/a", interface: nil, member: "M"),
            DBusMessage(kind: .error, replySerial: 1, errorName: "bad", destination: fixture.server.uniqueName),
            DBusMessage(kind: .methodReturn, destination: fixture.server.uniqueName),
        ]
        for message in bad {
            #expect(throws: DBusError.self, "\(message)") { try fixture.client.send(message) }
        }
    }

    @Test func nestingTooDeepIsRefused() async throws {
        let fixture = try EchoFixture()
        var value = DBusValue.int32(1)
        for _ in 0..<65 { value = .variant(value) }
        await #expect(throws: DBusError.self) { _ = try await fixture.echo([value]) }
        var arrays = DBusValue.int32(1)
        var signature = "i"
        for _ in 0..<33 {
            arrays = .array(element: DBusSignature(unchecked: signature), [arrays])
            signature = "a" + signature
        }
        await #expect(throws: DBusError.self) { _ = try await fixture.echo([arrays]) }
        #expect(try await fixture.echo([.string("still here")]) == [.string("still here")])
    }
}
