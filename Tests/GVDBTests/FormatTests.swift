import BusTestSupport
import GVDB
import Testing

/// The format itself: headers, the builder's rules, the reader's lookups.
@Suite("GVDB format")
struct FormatTests {
    let string = { (text: String) throws -> GVDBValue in try GVDBValue(typeString: "s", bytes: Array(text.utf8) + [0]) }

    @Test("the empty file is a header and an empty table, as gvdb-builder writes it")
    func emptyFile() throws {
        let bytes = try GVDBTableBuilder().serialized()
        #expect(bytes == Array("GVariant".utf8) + [0, 0, 0, 0, 0, 0, 0, 0, 24, 0, 0, 0, 32, 0, 0, 0, 0, 0, 0, 0x28, 0, 0, 0, 0])
        let file = try GVDBFile(bytes: bytes)
        #expect(file.count == 0)
        #expect(try file.names() == [])
        #expect(try file.value(forKey: "/a") == nil)
    }

    @Test("values, directories and nested tables are found by name; lists hold the children sorted")
    func lookups() throws {
        var table = GVDBTableBuilder()
        try table.insert("/b/z", value: string("z"), parent: "/b/")
        try table.insert("/b/a", value: string("a"), parent: "/b/")
        try table.insertDirectory("/b/", parent: "/")
        try table.insertDirectory("/")
        var nested = GVDBTableBuilder()
        try nested.insert("inner", value: string("i"))
        try table.insert("nested", table: nested)
        let file = try GVDBFile(bytes: table.serialized())
        try file.validate()
        #expect(Set(try file.names()) == ["/", "/b/", "/b/a", "/b/z", "nested"])
        #expect(try file.value(forKey: "/b/a") == string("a"))
        #expect(try file.value(forKey: "/b/") == nil)
        #expect(try file.list("/") == ["b/"])
        #expect(try file.list("/b/") == ["a", "z"])
        #expect(try file.list("/b/a") == nil)
        #expect(try file.table(forKey: "nested")?.value(forKey: "inner") == string("i"))
        #expect(file.hasValue("/b/z"))
        #expect(!file.hasValue("/b/"))
    }

    @Test("the writer refuses what it cannot store, saying why")
    func refusals() throws {
        var table = GVDBTableBuilder()
        try table.insert("/a/b", value: string("x"), parent: "/a/")
        let missingParent = #expect(throws: GVDBError.self) { try table.serialized() }
        #expect(missingParent?.kind == .invalidInput)
        #expect(missingParent?.message.contains("insertDirectory") == true)
        #expect(throws: GVDBError.self) { try table.insert("/a/b", value: string("y")) }
        #expect(throws: GVDBError.self) { try table.insert("/x", value: string("y"), parent: "/a/") }
        #expect(throws: GVDBError.self) { try GVDBValue(typeString: "ai(", bytes: []) }
        #expect(throws: GVDBError.self) { try GVDBValue(typeString: "ss", bytes: []) }
        #expect(throws: GVDBError.self) { try GVDBValue(typeString: "a{vs}", bytes: []) }
        #expect(throws: GVDBError.self) { try GVDBValue(typeString: "*", bytes: []) }
        #expect(try GVDBValue(typeString: "a{s(iv)}", bytes: []).typeString == "a{s(iv)}")
        #expect(try GVDBValue(typeString: "()", bytes: [0]).typeString == "()")
    }

    @Test("a fixed-size type needs its exact size: GLib's own serialisations pass, a short one is refused")
    func fixedSizes() throws {
        let parsed = try GLibVariant.parse([
            ("(yi)", "(byte 1, 2)"), ("(iy)", "(2, byte 1)"), ("(ybqx)", "(byte 1, true, uint16 3, int64 4)"), ("()", "()"),
            ("((y)(i))", "((byte 1,), (2,))"), ("(dy)", "(1.5, byte 2)"), ("a(yi)", "[(byte 1, 2)]"),
        ])
        #expect(parsed.map(\.bytes.count) == [8, 8, 16, 1, 8, 16, 8])
        let short = #expect(throws: GVDBError.self) { try GVDBValue(typeString: "i", bytes: [1, 2, 3]) }
        #expect(short?.message == "a value of type i is 4 bytes long, not 3")
        // Stored short, it is damage the reader reports.
        var table = GVDBTableBuilder()
        try table.insert("k", value: GVDBValue(typeString: "(yy)", bytes: [1, 2]))
        var bytes = try table.serialized()
        let variant = try #require(bytes.lastIndex(of: UInt8(ascii: "(")))
        bytes.replaceSubrange(variant..<variant + 4, with: Array("(yi)".utf8))
        let damage = #expect(throws: GVDBError.self) { try GVDBFile(bytes: bytes).validate() }
        #expect(damage?.message == "“k”: a stored value of type (yi) is 2 bytes long, not 8")
    }
}
