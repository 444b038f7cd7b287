import Testing

@testable import DBus

/// The validator remembers container signatures libdbus accepted (issue 22): what it
/// refuses stays refused, and the memory is bounded.
@Suite struct SignatureCacheTests {
    @Test func acceptedSignaturesStayAcceptedAndInvalidOnesRefused() throws {
        let good: DBusValue = .array(element: "{sv}", [.dictEntry(.string("k"), .variant(.int32(1)))])
        for _ in 0..<3 { try ValueValidator.validate(good) }
        // Past the limit the memory is emptied, and checking goes on as before.
        for last: DBusValue in [.string("s"), .int64(1)] {
            for count in 1...200 { try ValueValidator.validate(.structure(Array(repeating: .int32(1), count: count) + [last])) }
        }
        #expect(400 > ValueValidator.acceptedSignatureLimit)
        try ValueValidator.validate(good)
        #expect(throws: DBusError.self) { try ValueValidator.validate(.array(element: "{vs}", [])) }
        #expect(throws: DBusError.self) { try ValueValidator.validate(.array(element: "s", [.int32(1)])) }
        #expect(throws: DBusError.self) { try ValueValidator.validate(.variant(.array(element: "(", []))) }
    }
}
