import BusTestSupport
import Foundation
import PreferencesModel
import Testing

@Suite("Binary encoding of property-list values")
struct PropertyListValueEncodingTests {
    static let samples: [PropertyListValue] = [
        .string(""), .string("hello"), .string("ключ 🎛️ e\u{301} 日本語"), .string(String(repeating: "x", count: 300)),
        .integer(0), .integer(1), .integer(-1), .integer(.max), .integer(.min),
        .real(0), .real(1.5), .real(-.greatestFiniteMagnitude), .real(.leastNonzeroMagnitude),
        .real(.infinity), .real(-.infinity),
        .boolean(true), .boolean(false),
        .data(Data()), .data(Data([0, 1, 2, 255])), .data(Data(repeating: 7, count: 1000)),
        .date(secondsSince1970: 1_700_000_000), .date(secondsSince1970: -1e9), .date(secondsSince1970: 0.125),
        .array([]), .dictionary([:]),
        .array([.string("a"), .integer(2), .array([.boolean(true), .dictionary(["k": .real(3)])])]),
        .dictionary(["b": .integer(1), "a": .array([.data(Data([9]))]), "ü": .dictionary(["": .string("empty key")])]),
    ]

    @Test("every case round-trips", arguments: samples)
    func roundTrip(_ value: PropertyListValue) throws {
        let bytes = value.encoded()
        #expect(bytes.first == PropertyListValue.encodingVersion)
        #expect(try PropertyListValue(encoded: bytes) == value)
        // Any collection of bytes decodes, contiguous or not.
        #expect(try PropertyListValue(encoded: Data(bytes)) == value)
        #expect(try PropertyListValue(encoded: bytes[...]) == value)
        #expect(try PropertyListValue(encoded: bytes.reversed().reversed()) == value)
    }

    @Test("NaN, -0.0 and infinities keep their exact bit patterns")
    func bitExactReals() throws {
        let patterns: [UInt64] = [
            Double.nan.bitPattern, Double.signalingNaN.bitPattern, 0x7ff8_dead_beef_0001, 0xfff0_0000_0000_0001,
            (-0.0 as Double).bitPattern, Double.infinity.bitPattern, (-Double.infinity).bitPattern,
        ]
        for bits in patterns {
            for value in [PropertyListValue.real(Double(bitPattern: bits)), .date(secondsSince1970: Double(bitPattern: bits))] {
                let decoded = try PropertyListValue(encoded: value.encoded())
                switch decoded {
                case .real(let number), .date(let number):
                    #expect(number.bitPattern == bits)
                default:
                    Issue.record("decoded \(decoded) for \(value)")
                }
            }
        }
    }

    @Test("the encoding is deterministic and compact")
    func deterministic() {
        var first: [String: PropertyListValue] = [:]
        var second: [String: PropertyListValue] = [:]
        let keys = (0..<50).map { "key\($0)" }
        for key in keys { first[key] = .integer(1) }
        for key in keys.reversed() { second[key] = .integer(1) }
        #expect(PropertyListValue.dictionary(first).encoded() == PropertyListValue.dictionary(second).encoded())
        #expect(PropertyListValue.boolean(true).encoded() == [1, 0x05])
        #expect(PropertyListValue.integer(1).encoded() == [1, 0x02, 1, 0, 0, 0, 0, 0, 0, 0])
        #expect(PropertyListValue.string("ab").encoded() == [1, 0x01, 2, 0x61, 0x62])
        #expect(
            PropertyListValue.dictionary(["b": .boolean(false), "a": .boolean(true)]).encoded()
                == [1, 0x09, 2, 1, 0x61, 0x05, 1, 0x62, 0x04])
    }

    @Test("nesting up to 64 decodes, deeper is refused")
    func depth() throws {
        func nested(_ depth: Int) -> PropertyListValue {
            var value = PropertyListValue.integer(1)
            for level in 0..<depth { value = level.isMultiple(of: 2) ? .array([value]) : .dictionary(["k": value]) }
            return value
        }
        #expect(try PropertyListValue(encoded: nested(64).encoded()) == nested(64))
        #expect(throws: PreferencesModelError.self) { try PropertyListValue(encoded: nested(65).encoded()) }
        // A hostile input of a million nested array tags must be refused, not overflow the stack.
        let hostile = [UInt8(1)] + Array(repeating: [UInt8(0x08), 1], count: 1_000_000).joined()
        #expect(throws: PreferencesModelError.self) { try PropertyListValue(encoded: hostile) }
    }

    @Test(
        "malformed input is refused with a reason",
        arguments: [
            ([], "truncated"),
            ([1], "truncated"),
            ([2, 0x05], "version"),
            ([1, 0x0a], "tag"),
            ([1, 0x00], "tag"),
            ([1, 0x02, 1, 2, 3], "truncated"),
            ([1, 0x01, 5, 0x61], "truncated"),
            ([1, 0x01, 2, 0xc3, 0x28], "UTF-8"),
            ([1, 0x01, 1, 0xff], "UTF-8"),
            ([1, 0x05, 0x05], "trailing"),
            ([1, 0x08, 3, 0x05], "truncated"),
            ([1, 0x09, 2, 1, 0x61, 0x05, 1, 0x61, 0x04], "repeats"),
            ([1, 0x09, 1, 1, 0x61], "truncated"),
            ([1, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01], "overflow"),
            ([1, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], "overflow"),
            ([1, 0x06, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f], "truncated"),
        ] as [([UInt8], String)])
    func malformed(_ bytes: [UInt8], _ reason: String) {
        do {
            let value = try PropertyListValue(encoded: bytes)
            Issue.record("decoded \(value) from \(bytes)")
        } catch {
            guard case .undecodableValue(let text) = error else {
                Issue.record("wrong error \(error)")
                return
            }
            #expect(text.contains(reason), "\(text)")
        }
    }

    @Test("every truncation of a valid encoding is refused")
    func truncations() {
        let value = PropertyListValue.dictionary([
            "list": .array([.string("héllo"), .integer(-5), .real(.pi), .data(Data([1, 2, 3]))]),
            "when": .date(secondsSince1970: 1e9), "flag": .boolean(true),
        ])
        let bytes = value.encoded()
        for length in 0..<bytes.count {
            #expect(throws: PreferencesModelError.self) { try PropertyListValue(encoded: bytes.prefix(length)) }
        }
    }

    @Test("random bytes and mutated encodings never crash")
    func fuzz() throws {
        var generator = SeededGenerator(seed: 0x5eed)
        let seed = PropertyListValue.array(Self.samples).encoded()
        var decodedCount = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round.isMultiple(of: 2) {
                let length = Int(generator.next() % 64)
                bytes = (0..<length).map { _ in UInt8(truncatingIfNeeded: generator.next()) }
                if !bytes.isEmpty { bytes[0] = 1 }
            } else {
                bytes = seed
                for _ in 0..<1 + Int(generator.next() % 4) {
                    let index = Int(generator.next() % UInt64(bytes.count))
                    bytes[index] = UInt8(truncatingIfNeeded: generator.next())
                }
            }
            if let value = try? PropertyListValue(encoded: bytes) {
                decodedCount += 1
                // Whatever decodes must encode back to bytes that decode to the same value
                // (compared by encoding, as NaN is not equal to itself).
                let again = value.encoded()
                #expect(try PropertyListValue(encoded: again).encoded() == again)
            }
        }
        #expect(decodedCount > 0)
    }

    @Test("100,000 small values decode back to what was encoded (the time is printed, not judged)")
    func speed() throws {
        let values: [PropertyListValue] = (0..<100_000).map { index in
            switch index % 4 {
            case 0: .integer(Int64(index))
            case 1: .string("value number \(index)")
            case 2: .boolean(index.isMultiple(of: 3))
            default: .array([.real(Double(index)), .string("x")])
            }
        }
        let encoded = values.map { $0.encoded() }
        let clock = ContinuousClock()
        var decoded: [PropertyListValue] = []
        decoded.reserveCapacity(encoded.count)
        let elapsed = try clock.measure {
            for bytes in encoded { decoded.append(try PropertyListValue(encoded: bytes)) }
        }
        #expect(decoded == values)
        print("decoded 100,000 small values in \(elapsed)")
    }
}
