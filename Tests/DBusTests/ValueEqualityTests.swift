import Testing

@testable import DBus

/// D-Bus values are equal when they would travel as the same bytes.
@Suite("D-Bus values compare byte for byte")
struct ValueEqualityTests {
    @Test("strings by UTF-8 bytes, doubles by bit pattern, containers element by element")
    func bytes() {
        let nfc = "caf\u{E9}", nfd = "cafe\u{301}"
        #expect(DBusValue.string(nfc) != .string(nfd))
        #expect(DBusValue.double(0.0) != .double(-0.0))
        #expect(DBusValue.double(.nan) == .double(.nan))
        #expect(DBusValue.variant(.string(nfc)) != .variant(.string(nfd)))
        #expect(DBusValue.array(element: "s", [.string(nfc)]) != .array(element: "s", [.string(nfd)]))
        #expect(DBusValue.dictEntry(.string(nfc), .int32(1)) != .dictEntry(.string(nfd), .int32(1)))
        #expect(DBusValue.structure([.double(-0.0)]) != .structure([.double(0.0)]))
        #expect(DBusValue.structure([.double(1), .string(nfd)]) == .structure([.double(1), .string(nfd)]))
        #expect(DBusValue.string("a") != .objectPath("a"))
        #expect(Set<DBusValue>([.string(nfc), .string(nfd), .double(0.0), .double(-0.0), .double(.nan), .double(.nan)]).count == 5)
        #expect(DBusValue.variant(.string(nfd)).hashValue == DBusValue.variant(.string("cafe\u{301}")).hashValue)
    }
}
