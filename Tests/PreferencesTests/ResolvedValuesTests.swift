import PreferencesModel
import PropertyBased
import Testing

@testable import Preferences

/// The table of resolved values answers as a dictionary keyed by the keys' UTF-8 bytes would.
@Suite("Resolved values")
struct ResolvedValuesTests {
    /// Keys of every length around the hash's eight-byte words, one empty, non-ASCII ones,
    /// and two spellings of "é" that Swift's `==` holds equal but whose bytes differ.
    static let keys: [String] =
        ["", "a", "greeting", "seven77", "eight888", "nine99999", "fifteen15151515", "sixteen161616161", "é", "e\u{301}", "日本語のキー"]
        + [String(repeating: "long key ", count: 20)] + (0..<40).map { "Key\($0)" }

    @Test("a value, a key resolved to no value and a key never resolved are told apart")
    func absence() {
        var table = ResolvedValues()
        #expect(table["Missing"] == nil)
        table.set(nil, forKey: "Nothing")
        table.set(.string("hello"), forKey: "Greeting")
        #expect(table["Nothing"] == .some(nil))
        #expect(table["Greeting"] == .some(.string("hello")))
        #expect(table["Missing"] == nil)
        #expect(table.count == 2)
    }

    @Test("any sequence of sets and clears, with any seed, reads back as a dictionary of the keys' bytes")
    func matchesDictionary() async {
        let operation = zip(Gen.int(in: 0...49), Gen.int(in: 0...(Self.keys.count - 1)), Gen.int(in: -1...5))
        await propertyCheck(count: 200, input: operation.array(of: 0...300), Gen.int(in: 0...Int.max)) { operations, seed in
            var table = ResolvedValues(seed: UInt64(seed))
            var model: [[UInt8]: PropertyListValue?] = [:]
            for (kind, keyIndex, number) in operations {
                let key = Self.keys[keyIndex]
                if kind == 0 {
                    table.removeAll()
                    model.removeAll()
                } else {
                    let value: PropertyListValue? = number < 0 ? nil : .integer(Int64(number))
                    table.set(value, forKey: key)
                    model[Array(key.utf8)] = .some(value)
                }
                #expect(table[key] == model[Array(key.utf8)])
            }
            #expect(table.count == model.count)
            for key in Self.keys {
                #expect(table[key] == model[Array(key.utf8)], "\(key)")
            }
        }
    }

    @Test("thousands of keys, all in one table, each found")
    func manyKeys() {
        var table = ResolvedValues(seed: 0)
        for number in 0..<5_000 { table.set(.integer(Int64(number)), forKey: "com.example.Key\(number)") }
        #expect(table.count == 5_000)
        #expect((0..<5_000).allSatisfy { table["com.example.Key\($0)"] == .some(.integer(Int64($0))) })
        #expect(table["com.example.Key5000"] == nil)
        table.removeAll()
        #expect(table.count == 0 && table["com.example.Key1"] == nil)
    }
}
