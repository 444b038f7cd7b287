import Testing

@testable import DBus

/// The validator compares array elements with their element type in place
/// (`SignatureMatch.swift`): it must agree with comparing whole signature strings, for every
/// pair of types, and the validator's array size check, skipped for small bodies, still
/// refuses what it refused.
@Suite struct SignatureMatchTests {
    static let values: [DBusValue] = [
        .byte(1), .boolean(true), .int16(1), .uint16(1), .int32(1), .uint32(1), .int64(1), .uint64(1), .double(1),
        .string("s"), .objectPath("/"), .signature("g"), .unixFD, .variant(.int32(1)), .variant(.structure([.byte(1)])),
        .bytes([1]), .array(element: "y", []), .array(element: "s", []), .array(element: "as", []), .array(element: "{sv}", []),
        .array(element: "{ss}", []), .array(element: "(is)", []), .array(element: "a{sv}", []),
        .dictEntry(.string("k"), .variant(.int32(1))), .dictEntry(.string("k"), .string("v")),
        .dictEntry(.int32(1), .string("v")), .dictEntry(.string("k"), .array(element: "s", [])),
        .structure([]), .structure([.int32(1)]), .structure([.int32(1), .string("s")]),
        .structure([.int32(1), .structure([.string("s")])]), .structure([.array(element: "{sv}", [])]),
    ]

    @Test func agreesWithComparingSignatureStrings() {
        for value in Self.values {
            for other in Self.values {
                let expected = value.signatureText == other.signatureText
                var text = other.signatureText
                let matched = text.withUTF8 { value.signatureEnd(in: $0, from: 0) == $0.count }
                #expect(matched == expected, "\(value.signatureText) against \(other.signatureText)")
                // A prefix match ends where the value's own signature ends.
                var longer = value.signatureText + other.signatureText
                let end = longer.withUTF8 { value.signatureEnd(in: $0, from: 0) }
                #expect(end == value.signatureText.utf8.count, "\(value.signatureText) as a prefix")
            }
        }
    }

    @Test func elementsOfAnotherTypeAreFound() {
        let element: DBusSignature = "{sv}"
        let good = DBusValue.dictEntry(.string("k"), .variant(.int32(1)))
        #expect(element.firstNonConforming([good, good]) == nil)
        #expect(element.firstNonConforming([good, .dictEntry(.string("k"), .string("v")), good]) == .dictEntry(.string("k"), .string("v")))
        #expect(DBusSignature("s").firstNonConforming([.string("a"), .objectPath("/")]) == .objectPath("/"))
        #expect(DBusSignature("(is)").firstNonConforming([.structure([.int32(1)])]) == .structure([.int32(1)]))
    }

    @Test func anArrayPastTheLimitIsStillRefusedInsideAVariant() {
        // Strings of 4 + 1,019 + 1 bytes: 65,536 of them fill the 64 MiB an array may take.
        let string = DBusValue.string(String(repeating: "x", count: 1019))
        let limit = ValueValidator.maximumArrayLength / 1024
        let fits = Array(repeating: string, count: limit)
        let over = Array(repeating: string, count: limit + 1)
        #expect(throws: Never.self) { try ValueValidator.validate(body: [.variant(.array(element: .string, fits))]) }
        #expect(throws: DBusError.self) { try ValueValidator.validate(body: [.variant(.array(element: .string, over))]) }
        #expect(throws: DBusError.self) { try ValueValidator.validate(.structure([.array(element: .string, over)])) }
    }
}
