import BusTestSupport
import Testing

@testable import DBus

@Suite struct RoundTripTests {
    @Test func basicTypes() async throws {
        let fixture = try EchoFixture()
        let body: [DBusValue] = [
            .byte(0), .byte(255), .boolean(true), .boolean(false), .int16(-32768), .uint16(65535),
            .int32(-7), .uint32(4_000_000_000), .int64(.min), .uint64(.max), .double(3.25),
            .double(-0.0), .string(""), .string("héllo ✓"), .objectPath("/"), .objectPath("/a/b_1"),
            .signature(""), .signature("a{sv}"),
        ]
        #expect(try await fixture.echo(body) == body)
    }

    @Test func arrays() async throws {
        let fixture = try EchoFixture()
        let emptyDict = DBusValue.dictionary(key: .string, value: .variant, [])
        let fullDict = DBusValue.dictionary(
            key: .string, value: .variant,
            [(.string("a"), .variant(.int32(1))), (.string("b"), .variant(.string("x")))])
        let body: [DBusValue] = [
            .array(element: .string, []),
            .array(element: .string, [.string("a"), .string("b")]),
            .array(element: .int64, []),
            .array(element: .int64, [.int64(1), .int64(-2)]),
            .array(element: "av", []),
            .array(element: "av", [.array(element: .variant, []), .array(element: .variant, [.variant(.boolean(true))])]),
            emptyDict, fullDict,
            .dictionary(key: .uint32, value: "as", [(.uint32(7), .array(element: .string, [.string("z")]))]),
            .bytes([]), .bytes([1, 2, 3]),
            .array(element: "(is)", [.structure([.int32(1), .string("one")])]),
        ]
        #expect(try await fixture.echo(body) == body)
    }

    @Test func byteArraysComeBackAsBytes() async throws {
        let fixture = try EchoFixture()
        let reply = try await fixture.echo([.array(element: .byte, [.byte(9), .byte(8)]), .array(element: .byte, [])])
        #expect(reply == [.bytes([9, 8]), .bytes([])])
    }

    @Test func oneMebibyteOfBytes() async throws {
        let fixture = try EchoFixture()
        let data = (0..<(1 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        let reply = try await fixture.echo([.bytes(data)])
        #expect(reply == [.bytes(data)])
    }

    @Test func structsAndVariants() async throws {
        let fixture = try EchoFixture()
        let body: [DBusValue] = [
            .structure([.double(1_700_000_000.0)]),
            .structure([.int32(1), .structure([.string("in"), .variant(.uint16(3))])]),
            .variant(.int32(5)),
            .variant(.variant(.string("deep"))),
            .variant(.variant(.variant(.array(element: .variant, [.variant(.bytes([0]))])))),
            .variant(.dictionary(key: .string, value: .variant, [(.string("k"), .variant(.double(2)))])),
        ]
        #expect(try await fixture.echo(body) == body)
    }

    @Test func nestingUpToTheLimitTravels() async throws {
        let fixture = try EchoFixture()
        var value = DBusValue.int32(1)
        for _ in 0..<63 { value = .variant(value) }
        #expect(try await fixture.echo([value]) == [value])
    }

    @Test func marshalledSizeMatchesLibdbus() throws {
        let values: [DBusValue] = [
            .byte(1), .boolean(true), .int16(1), .int64(1), .string("abc"), .signature("a{sv}"),
            .bytes(Array(repeating: 7, count: 1000)), .array(element: .int64, []),
            .array(element: .int64, [.int64(1)]), .array(element: "(y)", []),
            .structure([.byte(1), .double(2)]), .variant(.string("x")), .variant(.int64(3)),
            .dictionary(key: .string, value: .variant, [(.string("a"), .variant(.int32(1))), (.string("bb"), .variant(.bytes([1])))]),
            .variant(.variant(.structure([.byte(1), .array(element: "ad", [.array(element: .double, [.double(1)])])]))),
        ]
        for value in values {
            #expect(value.marshalledSize == (try libdbusBodyLength(of: [value])), "\(value)")
        }
        // A whole body: alignment carries over between arguments.
        let body: [DBusValue] = [.byte(1), .int64(2), .string("s"), .variant(.double(1)), .bytes([1, 2])]
        let end = body.reduce(0) { $1.marshalledEnd(from: $0) }
        #expect(end == (try libdbusBodyLength(of: body)))
        #expect(DBusValue.bytes(Array(repeating: 0, count: 1 << 20)).marshalledSize == 4 + (1 << 20))
    }

    @Test func signatures() throws {
        #expect(DBusValue.dictionary(key: .string, value: .variant, []).signature == "a{sv}")
        #expect(DBusValue.structure([.int32(1), .variant(.byte(1))]).signature.rawValue == "(iv)")
        #expect(DBusMessage.signal(path: "/a", interface: "a.b", member: "C", body: [.string(""), .bytes([])]).signature == "say")
        // Through a variable: `DBusSignature("…")` with a literal is literal coercion (SE-0213)
        // and does not go through the validating initializer.
        let texts = ["a{sv}", "a{vs}", "(", "s\0", "", "ss(ia{sv})"]
        let valid = texts.map { (try? DBusSignature($0)) != nil }
        #expect(valid == [true, false, false, false, true, true])
        #expect(throws: DBusError.self) { try DBusSignature(texts[1]) }
    }
}
