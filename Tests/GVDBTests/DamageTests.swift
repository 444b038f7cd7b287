import BusTestSupport
import DconfFormats
import GVDB
import Testing

/// Damaged and hostile files: each gives a GVDBError, never a crash or a read out of bounds.
@Suite("Damaged GVDB files")
struct DamageTests {
    /// A small valid database: a few keys, a nested directory tree.
    static func sample() throws -> [UInt8] {
        var values: [String: GVDBValue] = [:]
        for (index, key) in ["/a/b", "/a/c/d", "/e", "/a/c/f", "/g/h/i/j"].enumerated() {
            values[key] = try GVDBValue(typeString: "i", bytes: [UInt8(index), 0, 0, 0])
        }
        return try DconfDatabaseFile.file(values)
    }

    /// Every way of reading `bytes`, returning the first error (nil when it reads whole).
    static func readAll(_ bytes: [UInt8]) -> GVDBError? {
        do {
            let file = try GVDBFile(bytes: bytes)
            for name in (try? file.names()) ?? [] {
                _ = try? file.value(forKey: name)
                _ = try? file.list(name)
                _ = try? file.table(forKey: name)
                _ = file.hasValue(name)
            }
            _ = try? file.value(forKey: "/a/b")
            _ = try? file.list("/")
            _ = try? file.valueItems()
            try file.validate()
            _ = try DconfDatabaseFile.values(in: bytes)
            return nil
        } catch let error as GVDBError {
            return error
        } catch {
            Issue.record("not a GVDBError: \(error)")
            return nil
        }
    }

    @Test("every truncation of a valid file is an error", arguments: [0, 1, 8, 23, 24, 31])
    func truncatedHeader(length: Int) throws {
        let error = Self.readAll(Array(try Self.sample().prefix(length)))
        #expect(error != nil)
    }

    @Test("cut short anywhere, a file is refused or reads what remains, never crashes")
    func truncatedAnywhere() throws {
        let bytes = try Self.sample()
        for length in 0..<bytes.count {
            #expect(Self.readAll(Array(bytes.prefix(length))) != nil, "cut at \(length)")
        }
    }

    @Test("a bad signature, a big-endian signature, a version other than 0")
    func badHeaders() throws {
        var bytes = try Self.sample()
        bytes[0] = UInt8(ascii: "X")
        #expect(Self.readAll(bytes)?.kind == .badHeader)
        bytes = try Self.sample()
        bytes.replaceSubrange(0..<8, with: Array("raVGtnai".utf8))
        #expect(Self.readAll(bytes)?.message.contains("big-endian") == true)
        bytes = try Self.sample()
        bytes[8] = 1
        #expect(Self.readAll(bytes)?.kind == .badHeader)
    }

    @Test("a root pointer past the end, backwards or misaligned")
    func badRoot() throws {
        for (start, end) in [(24, 100_000), (40, 30), (25, 33), (0xFFFF_FFF0, 0xFFFF_FFFF)] as [(UInt32, UInt32)] {
            var bytes = try Self.sample()
            bytes.replaceSubrange(16..<24, with: le32(start) + le32(end))
            #expect(Self.readAll(bytes) != nil, "root \(start)..<\(end)")
        }
    }

    @Test("an item that is its own parent, and two that are each other's, are refused by name")
    func parentLoops() throws {
        var table = GVDBTableBuilder()
        try table.insert("a", value: GVDBValue(typeString: "b", bytes: [1]))
        try table.insert("b", value: GVDBValue(typeString: "b", bytes: [0]))
        var bytes = try table.serialized()
        // Items start after the table header (8 bytes) and two buckets.
        let items = 24 + 8 + 8
        bytes.replaceSubrange(items + 4..<items + 8, with: le32(0))
        #expect(Self.readAll(bytes)?.kind == .badItem)
        bytes.replaceSubrange(items + 24 + 4..<items + 24 + 8, with: le32(0))
        bytes.replaceSubrange(items + 4..<items + 8, with: le32(1))
        #expect(Self.readAll(bytes)?.kind == .badItem)
    }

    @Test("a nested table that contains itself ends in an error")
    func selfNestedTable() throws {
        var table = GVDBTableBuilder()
        try table.insert("t", table: GVDBTableBuilder())
        var bytes = try table.serialized()
        let item = 24 + 8 + 4
        // Point the nested table at the root table, which holds it.
        bytes.replaceSubrange(item + 16..<item + 24, with: Array(bytes[16..<24]))
        #expect(Self.readAll(bytes)?.kind == .badItem)
    }

    @Test("read item by item, one value outside the file costs that value, and an item whose parent loops is left out; the others read as they were")
    func itemByItem() throws {
        var bytes = try Self.sample()
        let table = Int(Self.word(bytes, 16))
        let items = table + 8 + 4 * Int(Self.word(bytes, table) & ((1 << 27) - 1)) + 4 * Int(Self.word(bytes, table + 4))
        let count = (Int(Self.word(bytes, 20)) - items) / 24
        func name(_ item: Int) -> String {
            let start = Int(Self.word(bytes, items + 24 * item + 8))
            let size = Int(bytes[items + 24 * item + 12]) | Int(bytes[items + 24 * item + 13]) << 8
            return String(decoding: bytes[start..<start + size], as: UTF8.self)
        }
        let before = try DconfDatabaseFile.values(in: bytes)
        // “/e” (a value at the root) points past the end; “j” (of /g/h/i/j) becomes its own parent.
        let outside = try #require((0..<count).first { name($0) == "e" })
        bytes.replaceSubrange(items + 24 * outside + 16..<items + 24 * outside + 24, with: le32(8) + le32(UInt32(bytes.count + 8)))
        let looping = try #require((0..<count).first { name($0) == "j" })
        bytes.replaceSubrange(items + 24 * looping + 4..<items + 24 * looping + 8, with: le32(UInt32(looping)))
        #expect(Self.readAll(bytes) != nil)

        let read = try DconfDatabaseFile.storedVariants(in: bytes)
        #expect(Set(read.keys) == ["/a/b", "/a/c/d", "/a/c/f", "/e"])
        guard case .failure(let error)? = read["/e"] else {
            Issue.record("/e read: \(String(describing: read["/e"]))")
            return
        }
        #expect(error.kind == .outOfBounds && error.message.contains("/e"), "\(error)")
        for key in ["/a/b", "/a/c/d", "/a/c/f"] {
            guard case .success(let variant)? = read[key] else {
                Issue.record("\(key) not read")
                continue
            }
            // A stored variant: the value's bytes, a zero, its type string.
            let expected = try #require(before[key])
            #expect(Array(variant) == expected.bytes + [0] + Array(expected.typeString.utf8), "\(key)")
        }
    }

    /// The little-endian 32-bit word at `offset` of `bytes`.
    static func word(_ bytes: [UInt8], _ offset: Int) -> UInt32 {
        (0..<4).reduce(0) { $0 | UInt32(bytes[offset + $1]) << (8 * $1) }
    }

    @Test("random mutations of a valid file never crash the reader", arguments: 0..<4)
    func fuzz(seed: UInt64) throws {
        let original = try Self.sample()
        var random = SeededGenerator(seed: 0x6776_6462 &+ seed)
        for round in 0..<2500 {
            var bytes = original
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let offset = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[offset] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes[offset] ^= 1 << UInt8.random(in: 0..<8, using: &random)
                case 2:
                    // A 32-bit word made large, small or near the file's size.
                    let word = offset & ~3
                    if word + 4 <= bytes.count {
                        let choices: [UInt32] = [0, 0xFFFF_FFFF, UInt32(bytes.count), UInt32(bytes.count) - 1, UInt32.random(in: 0...64, using: &random)]
                        bytes.replaceSubrange(word..<word + 4, with: le32(choices.randomElement(using: &random) ?? 0))
                    }
                default: bytes = Array(bytes.prefix(offset))
                }
                if bytes.isEmpty { break }
            }
            _ = Self.readAll(bytes)
            _ = round
        }
    }
}

/// `value` in four little-endian bytes.
func le32(_ value: UInt32) -> [UInt8] {
    (0..<4).map { UInt8(truncatingIfNeeded: value >> (8 * $0)) }
}
