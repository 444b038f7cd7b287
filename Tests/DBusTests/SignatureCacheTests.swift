import Testing

@testable import DBus

/// The validator remembers container signatures libdbus accepted: what it refuses stays
/// refused and is never remembered, and however many signatures a peer sends, the memory
/// holds at most its limit.
@Suite struct SignatureCacheTests {
    @Test func acceptedSignaturesAreRememberedWithinTheLimit() throws {
        let good: DBusValue = .array(element: "{sv}", [.dictEntry(.string("k"), .variant(.int32(1)))])
        try ValueValidator.validate(good)
        #expect(ValueValidator.rememberedSignatures.contains("a{sv}"))

        // Ever new signatures, several times the limit: each is remembered when accepted,
        // and the memory never holds more than the limit.
        var largest = 0
        for last: DBusValue in [.string("s"), .int64(1), .double(1), .boolean(true)] {
            for count in 1...200 {
                let value: DBusValue = .structure(Array(repeating: .int32(1), count: count) + [last])
                try ValueValidator.validate(value)
                let remembered = ValueValidator.rememberedSignatures
                #expect(remembered.contains(value.signatureText), "\(value.signatureText) was accepted but not remembered")
                largest = max(largest, remembered.count)
            }
        }
        #expect(largest == ValueValidator.acceptedSignatureLimit, "the memory held at most \(largest) signatures")

        // Checking goes on after the memory was emptied; refusals are never remembered.
        try ValueValidator.validate(good)
        for refused: DBusValue in [.array(element: "{vs}", []), .array(element: "s", [.int32(1)]), .variant(.array(element: "(", []))] {
            #expect(throws: DBusError.self) { try ValueValidator.validate(refused) }
        }
        #expect(!ValueValidator.rememberedSignatures.contains("a{vs}"))
        #expect(!ValueValidator.rememberedSignatures.contains("a("))
    }
}
