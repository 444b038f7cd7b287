import Testing

@testable import DBus

/// Messages marshalled in Swift (``WireFormat``) are what libdbus reads back: every header
/// field, flag and value, alignment and nesting included.
@Suite struct WireFormatTests {
    static let bodies: [[DBusValue]] = [
        [
            .string("bench.big"), .array(element: "{sv}", [.dictEntry(.string("w"), .variant(.int64(-7)))]),
            .array(element: .string, []), .array(element: .string, []),
        ],
        [.string("d"), .variant(.structure([.byte(1), .double(-0.0), .uint64(.max)]))],
        [.byte(9), .int64(1), .int16(-2), .uint16(3), .byte(4), .uint32(5), .boolean(true), .boolean(false)],
        [.bytes([]), .bytes([1, 2, 3]), .array(element: "y", [.byte(4), .byte(5)]), .string("é, NFD é, \u{1F600}")],
        [.objectPath("/io/github/x"), .signature("a{sv}(id)"), .array(element: "(id)", [.structure([.int32(1), .double(2.5)])])],
        [
            .array(
                element: "a{sv}",
                [
                    .array(element: "{sv}", []),
                    .array(element: "{sv}", [.dictEntry(.string("k"), .variant(.variant(.string("deep"))))]),
                ]),
            .array(element: "x", [.int64(1), .int64(2)]), .array(element: "{ss}", []),
        ],
        [.string(""), .variant(.array(element: "d", []))],
    ]

    static let messages: [DBusMessage] = bodies.flatMap { body -> [DBusMessage] in
        [
            .signal(path: "/io/github/prefsd/Preferences1", interface: "io.github.prefsd.Preferences1", member: "Changed", body: body),
            DBusMessage(kind: .methodReturn, replySerial: 41, destination: ":1.234", autoStart: false, body: body),
            DBusMessage(
                kind: .methodCall, path: "/a", interface: "a.b", member: "M", destination: "a.c",
                noReplyExpected: true, body: body),
            DBusMessage(kind: .error, replySerial: 7, errorName: "a.b.Error", destination: ":1.9", body: [.string("why")] + body),
        ]
    }

    @Test(arguments: messages)
    func libdbusReadsBackWhatWasMarshalled(message: DBusMessage) throws {
        let pointer = try #require(WireFormat.demarshal(message), "libdbus refused the bytes of \(message.signature)")
        let raw = RawMessage(owning: pointer)
        let decoded = try MessageDecoder.decode(raw.pointer)
        #expect(decoded.kind == message.kind)
        #expect(decoded.serial == 0, "the encoder leaves the serial to libdbus's send")
        #expect(decoded.replySerial == message.replySerial)
        #expect(decoded.path == message.path)
        #expect(decoded.interface == message.interface)
        #expect(decoded.member == message.member)
        #expect(decoded.errorName == message.errorName)
        #expect(decoded.destination == message.destination)
        #expect(decoded.noReplyExpected == message.noReplyExpected)
        #expect(decoded.autoStart == message.autoStart)
        #expect(decoded.signature == message.signature)
        #expect(decoded.body == normalized(message.body))
    }

    /// The encoder sends several arguments through ``WireFormat``: the message it builds
    /// carries them all.
    @Test func theEncoderUsesTheMarshalledForm() throws {
        let message = Self.messages[0]
        #expect(message.body.count >= WireFormat.minimumArguments)
        let raw = try MessageEncoder.encode(message)
        #expect(try MessageDecoder.decode(raw.pointer).body == normalized(message.body))
    }

    /// What the decoder makes of a body: `ay` comes back as `.bytes`.
    private func normalized(_ body: [DBusValue]) -> [DBusValue] {
        body.map(normalized)
    }

    private func normalized(_ value: DBusValue) -> DBusValue {
        switch value {
        case .array(let element, let items) where element.rawValue == "y":
            return .bytes(items.compactMap { if case .byte(let b) = $0 { b } else { nil } })
        case .array(let element, let items): return .array(element: element, items.map(normalized))
        case .dictEntry(let key, let entry): return .dictEntry(normalized(key), normalized(entry))
        case .structure(let fields): return .structure(fields.map(normalized))
        case .variant(let inner): return .variant(normalized(inner))
        default: return value
        }
    }
}
