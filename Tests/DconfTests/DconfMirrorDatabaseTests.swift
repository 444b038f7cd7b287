import Dconf
import GVDB
import Testing

/// ``DconfMirrorDatabase``: prefsd's mirror changed key by key, its file read back.
@Suite("dconf mirror database")
struct DconfMirrorDatabaseTests {
    /// An `i` value.
    func int32(_ number: Int32) throws -> DconfValue {
        DconfValue(try GVDBValue(typeString: "i", bytes: withUnsafeBytes(of: number.littleEndian) { Array($0) }))
    }

    @Test("the file holds the values set, carries prefsd's mark, and equals the file made at once from the same values")
    func readBack() throws {
        var database = DconfMirrorDatabase()
        var expected: [String: DconfValue] = [:]
        for index in 0..<300 {
            let path = "/org/example/group\(index % 5)/key\(index)"
            try database.set(path, to: int32(Int32(index)))
            expected[path] = try int32(Int32(index))
        }
        // Replaced, then removed: the last word holds.
        try database.set("/org/example/group1/key1", to: int32(-1))
        expected["/org/example/group1/key1"] = try int32(-1)
        try database.set("/org/example/group2/key2", to: nil)
        expected["/org/example/group2/key2"] = nil
        #expect(database.values == expected)

        let bytes = try database.file()
        #expect(DconfMirror.isMirror(bytes))
        #expect(try DconfMirror.values(inFile: bytes) == expected)
        #expect(try DconfMirror.file(expected) == bytes)
        #expect(try GVDBFile(bytes: bytes).list("/org/example/") == ["group0/", "group1/", "group2/", "group3/", "group4/"])
    }

    @Test("a path that is not a dconf key is refused and changes nothing")
    func refusal() throws {
        var database = DconfMirrorDatabase()
        try database.set("/a/b", to: int32(1))
        let before = try database.file()
        #expect(throws: GVDBError.self) { try database.set("/a/", to: int32(2)) }
        #expect(database.values.count == 1)
        #expect(try database.file() == before)
    }

    @Test(
        "a stored variant reads as GLib reads it: a type string naming no type, or a fixed-size value of another size, is (); a string that is not UTF-8 is empty"
    )
    func storedVariants() throws {
        let odd = DconfValue(storedVariant: ArraySlice(Array("zzzz".utf8) + [0, 0] + Array("!".utf8)))
        #expect(odd.type == "()" && odd.text == "()")
        let short = DconfValue(storedVariant: [1, 2, 3, 0, UInt8(ascii: "i")])
        #expect(short.type == "()", "\(short.type)")
        let latin1 = DconfValue(storedVariant: [0x63, 0x61, 0x66, 0xE9, 0, 0, UInt8(ascii: "s")])
        #expect(latin1.type == "s" && latin1.text == "''", "\(latin1.type) \(latin1.text)")
        let good = DconfValue(storedVariant: [42, 0, 0, 0, 0, UInt8(ascii: "i")])
        #expect(good == (try int32(42)))
    }
}
