import Testing

@testable import DBus

/// The shortcuts of the call and reply path say what the slow paths say.
@Suite struct SignatureFastPathTests {
    static let bodies: [[DBusValue]] = [
        [],
        [.string("d"), .string("k")],
        [.string("d"), .string("k"), .variant(.int64(1))],
        [.string("d"), .array(element: .string, []), .array(element: "{sv}", [])],
        [.bytes([1]), .structure([.int32(1), .string("x")]), .double(1)],
        [.array(element: "{sv}", [.dictEntry(.string("k"), .variant(.boolean(true)))])],
        [.objectPath("/a"), .signature("s"), .uint32(1), .byte(1), .int16(1), .uint16(1), .uint64(1)],
    ]

    static let signatures = [
        "", "s", "ss", "ssv", "ssvs", "sv", "sas", "sasa{sv}", "saya{sv}", "ay(is)d",
        "aya(is)d", "a{sv}", "a{sb}", "ogtuynqt", "ogtuynq", "v", "sss",
    ]

    @Test(arguments: bodies)
    func hasSignatureAgreesWithTheJoinedSignature(body: [DBusValue]) {
        let message = DBusMessage.methodCall(destination: nil, path: "/a", interface: nil, member: "M", body: body)
        for signature in Self.signatures + [message.signature] {
            #expect(message.hasSignature(signature) == (message.signature == signature), "\(message.signature) vs \(signature)")
        }
    }

    /// Every one-byte signature the validator takes without asking libdbus, libdbus takes
    /// as a single complete type too; every other one-byte signature still goes to libdbus.
    @Test func oneLetterTypesAreWhatLibdbusAccepts() {
        var accepted: [String] = []
        for byte in UInt8(1)...UInt8(127) {
            let signature = String(UnicodeScalar(byte))
            let libdbus = ValueValidator.libdbusSingleSignatureFailure(signature) == nil
            if ValueValidator.isOneLetterType(signature) {
                #expect(libdbus, "\(signature) is taken without libdbus, which refuses it")
                accepted.append(signature)
            }
        }
        #expect(accepted.sorted() == ["b", "d", "g", "h", "i", "n", "o", "q", "s", "t", "u", "v", "x", "y"])
        #expect(!ValueValidator.isOneLetterType(""))
        #expect(!ValueValidator.isOneLetterType("ss"))
        #expect(!ValueValidator.isOneLetterType("a"))
    }

    /// `oneLetterTypeCode` is the signature's one letter, and nil exactly for longer signatures.
    @Test(arguments: bodies)
    func oneLetterTypeCodeIsTheSignature(body: [DBusValue]) {
        for value in body + [.variant(.variant(.string("deep"))), .unixFD] {
            if let code = value.oneLetterTypeCode {
                #expect(String(UnicodeScalar(code)) == value.signatureText)
            } else {
                #expect(value.signatureText.utf8.count > 1)
            }
        }
    }
}
