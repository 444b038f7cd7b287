import Foundation
import PreferencesModel
import Testing

/// Contract 0.3: two values are the same only when they are the same bytes.
@Suite("Values compare byte for byte")
struct ValueEqualityTests {
    static let nfc = "caf\u{E9}"
    static let nfd = "cafe\u{301}"

    /// Pairs that Swift's `String ==` and `Double ==` call equal and that differ in their bytes.
    static let differingPairs: [(PropertyListValue, PropertyListValue)] = [
        (.string(nfc), .string(nfd)),
        (.real(0.0), .real(-0.0)),
        (.date(secondsSince1970: 0.0), .date(secondsSince1970: -0.0)),
        (.array([.string(nfc)]), .array([.string(nfd)])),
        (.array([.integer(1), .real(0.0)]), .array([.integer(1), .real(-0.0)])),
        (.dictionary(["k": .string(nfc)]), .dictionary(["k": .string(nfd)])),
        (.dictionary(["k": .real(0.0)]), .dictionary(["k": .real(-0.0)])),
        (.dictionary([nfc: .integer(1)]), .dictionary([nfd: .integer(1)])),
        (
            .dictionary(["outer": .array([.dictionary(["inner": .string(nfc)])])]),
            .dictionary(["outer": .array([.dictionary(["inner": .string(nfd)])])])
        ),
    ]

    @Test("NFC and NFD spellings of a string are different values")
    func normalisations() {
        #expect(Self.nfc == Self.nfd, "Swift's String == is canonical equivalence: the premise of this test")
        #expect(PropertyListValue.string(Self.nfc) != .string(Self.nfd))
        #expect(PropertyListValue.string(Self.nfd) == .string("cafe\u{301}"))
    }

    @Test("-0.0 is not 0.0; a NaN equals a NaN of the same bits")
    func reals() {
        #expect(PropertyListValue.real(0.0) != .real(-0.0))
        #expect(PropertyListValue.date(secondsSince1970: 0.0) != .date(secondsSince1970: -0.0))
        #expect(PropertyListValue.real(.nan) == .real(.nan))
        #expect(PropertyListValue.real(Double(bitPattern: 0x7ff8_0000_0000_0001)) != .real(Double(bitPattern: 0x7ff8_0000_0000_0002)))
        #expect(PropertyListValue.real(1.5) == .real(1.5))
    }

    @Test("values differing in one byte, also nested, are unequal and hash apart as keys")
    func nested() {
        for (a, b) in Self.differingPairs {
            #expect(a != b, "\(a) and \(b)")
            #expect(Set([a, b]).count == 2, "a set keeps both \(a) and \(b)")
        }
    }

    @Test("equal values hash alike, also dictionaries built in another order")
    func hashing() {
        for (a, b) in Self.differingPairs {
            #expect(a == a && b == b)
            #expect(a.hashValue == a.hashValue)
        }
        var forward: [String: PropertyListValue] = [:]
        var backward: [String: PropertyListValue] = [:]
        let keys = (0..<200).map { "key\($0)" }
        for key in keys { forward[key] = .string(key) }
        for key in keys.reversed() { backward[key] = .string(key) }
        #expect(PropertyListValue.dictionary(forward) == .dictionary(backward))
        #expect(PropertyListValue.dictionary(forward).hashValue == PropertyListValue.dictionary(backward).hashValue)
        #expect(PropertyListValue.string(Self.nfd).hashValue == PropertyListValue.string("cafe\u{301}").hashValue)
        #expect(PropertyListValue.real(.nan).hashValue == PropertyListValue.real(.nan).hashValue)
        #expect(Set<PropertyListValue>([.real(.nan), .real(.nan)]).count == 1)
    }

    @Test("different types are never equal")
    func types() {
        #expect(PropertyListValue.integer(1) != .real(1))
        #expect(PropertyListValue.real(0) != .date(secondsSince1970: 0))
        #expect(PropertyListValue.string("") != .data(Data()))
        #expect(PropertyListValue.array([]) != .dictionary([:]))
    }

    @Test("a dictionary holds one of two keys that differ only in normalisation")
    func dictionaryKeys() {
        // Swift's dictionary tells keys apart by canonical equivalence: the second spelling
        // replaces the first one's value and keeps the first one's bytes. That is why the
        // bus decoder refuses such a pair, and why comparing dictionaries compares the
        // bytes of the key each one holds.
        var entries: [String: PropertyListValue] = [Self.nfc: .integer(1)]
        entries[Self.nfd] = .integer(2)
        #expect(entries.count == 1)
        #expect(PropertyListValue.dictionary(entries) == .dictionary([Self.nfc: .integer(2)]))
        #expect(PropertyListValue.dictionary(entries) != .dictionary([Self.nfd: .integer(2)]))
    }

    @Test("isEquivalent is the reading a person makes: canonical strings, numeric reals")
    func equivalence() {
        for (a, b) in Self.differingPairs {
            #expect(a.isEquivalent(to: b), "\(a) reads as \(b)")
        }
        #expect(!PropertyListValue.real(.nan).isEquivalent(to: .real(.nan)))
        #expect(!PropertyListValue.integer(1).isEquivalent(to: .real(1)))
        #expect(!PropertyListValue.string("a").isEquivalent(to: .string("b")))
    }

    @Test("the binary encoding keeps the bytes that tell values apart")
    func encoding() throws {
        for (a, b) in Self.differingPairs {
            #expect(a.encoded() != b.encoded())
            #expect(try PropertyListValue(encoded: a.encoded()) == a)
            #expect(try PropertyListValue(encoded: b.encoded()) == b)
        }
    }
}
