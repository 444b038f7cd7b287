import DconfFormats
import GVDB
import Testing

/// ``DconfDatabaseBuilder``: a database changed key by key, its file read back by this
/// module's reader and by dconf's own.
@Suite("dconf database built key by key")
struct DconfDatabaseBuilderTests {
    let string = { (text: String) throws -> GVDBValue in try GVDBValue(typeString: "s", bytes: Array(text.utf8) + [0]) }
    let int32 = { (number: Int32) throws -> GVDBValue in
        try GVDBValue(typeString: "i", bytes: withUnsafeBytes(of: number.littleEndian) { Array($0) })
    }

    /// Keys in a tree of several depths, each with a value of its own.
    func sampleKeys() throws -> [String: GVDBValue] {
        var values: [String: GVDBValue] = ["/top": try string("top"), "/ä/ü": try string("unicode")]
        for index in 0..<500 {
            values["/org/example/d\(index % 7)/e\(index % 11)/key-\(index)"] = try int32(Int32(index))
        }
        return values
    }

    /// The builder holding `values`, set in the order of their keys' bytes.
    func built(_ values: [String: GVDBValue], annotations: [String: GVDBValue] = [:]) throws -> DconfDatabaseBuilder {
        var database = DconfDatabaseBuilder()
        for (key, value) in values.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            try database.setValue(value, forKey: key)
        }
        for (name, value) in annotations { try database.setAnnotation(value, named: name) }
        return database
    }

    @Test("every key reads back with its value, and every directory lists what DconfDatabaseFile lists")
    func readBack() throws {
        let values = try sampleKeys()
        let bytes = try built(values).file()
        #expect(try DconfDatabaseFile.values(in: bytes) == values)
        let file = try GVDBFile(bytes: bytes)
        let reference = try GVDBFile(bytes: DconfDatabaseFile.file(values))
        #expect(Set(try file.names()) == Set(try reference.names()))
        #expect(file.count == reference.count)
        for name in try reference.names() where name.hasSuffix("/") {
            #expect(try file.list(name) == reference.list(name), "\(name)")
        }
        #expect(try file.list("/") == ["org/", "top", "ä/"])
        #expect(try file.value(forKey: "/org/example/d3/e6/key-YES") == nil)
    }

    @Test("an empty database is a header and an empty table")
    func empty() throws {
        let bytes = try DconfDatabaseBuilder().file()
        #expect(bytes == (try GVDBTableBuilder().serialized()))
        #expect(try DconfDatabaseFile.values(in: bytes) == [:])
    }

    @Test("the bytes depend on the content, not on the changes that made it; removing a key removes the directories it empties")
    func history() throws {
        let values = try sampleKeys()
        var database = DconfDatabaseBuilder()
        // Another order, extra keys later removed, values later replaced.
        for (key, value) in values.sorted(by: { $0.key.utf8.count > $1.key.utf8.count }) {
            try database.setValue(string("old"), forKey: key)
            try database.setValue(value, forKey: key)
        }
        for index in 0..<50 {
            try database.setValue(int32(1), forKey: "/gone/a\(index % 3)/k\(index)")
            try database.setValue(int32(2), forKey: "/org/example/d1/extra\(index)")
        }
        for index in 0..<50 {
            try database.setValue(nil, forKey: "/gone/a\(index % 3)/k\(index)")
            try database.setValue(nil, forKey: "/org/example/d1/extra\(index)")
        }
        try database.setValue(nil, forKey: "/never/set")
        #expect(try database.file() == built(values).file())
        #expect(database.itemCount == (try built(values).itemCount))
        let file = try GVDBFile(bytes: database.file())
        #expect(try file.list("/gone/") == nil)
        #expect(!(try file.names()).contains { $0.hasPrefix("/gone") })

        // Every key removed: nothing left, not even "/".
        for key in values.keys { try database.setValue(nil, forKey: key) }
        #expect(database.itemCount == 0)
        #expect(try database.file() == DconfDatabaseBuilder().file())
    }

    @Test("annotations are stored at the root, out of dconf's sight, and can be replaced or removed")
    func annotations() throws {
        let values = try sampleKeys()
        var database = try built(values, annotations: [".mark": string("a")])
        try database.setAnnotation(string("b"), named: ".mark")
        var file = try GVDBFile(bytes: database.file())
        #expect(try file.value(forKey: ".mark") == string("b"))
        #expect(try DconfDatabaseFile.values(in: database.file()) == values)
        try database.setAnnotation(nil, named: ".mark")
        file = try GVDBFile(bytes: database.file())
        #expect(!file.hasValue(".mark"))
        #expect(throws: GVDBError.self) { try database.setAnnotation(string("x"), named: "/not-an-annotation") }
    }

    @Test("what is not a dconf key is refused, and changes nothing")
    func refusals() throws {
        var database = try built(["/a/b": string("x")])
        let before = try database.file()
        for key in ["a/b", "/a/", "/a//b", "", "/a\u{0}b", "/" + String(repeating: "x", count: 70_000) + "/k"] {
            #expect(throws: GVDBError.self, "\(key.prefix(8))") { try database.setValue(string("y"), forKey: key) }
        }
        #expect(try database.file() == before)
    }

    @Test("dconf's own reader reads the file: read, list and dump")
    func dconfReads() throws {
        let samples = try sampleValues()
        var database = DconfDatabaseBuilder()
        for (key, variant) in samples { try database.setValue(variant.value(), forKey: key) }
        try database.setAnnotation(string("mark"), named: ".mark")
        let home = try DconfHome()
        defer { home.remove() }
        try home.install(database.file())
        for (key, variant) in samples {
            #expect(try home.dconf(["read", key]) == variant.printed + "\n", "dconf read \(key)")
        }
        #expect(try home.dconf(["list", "/"]) == "com/\norg/\ntop-level\n")
        #expect(try home.dconf(["list", "/com/example/app/"]) == "big\ncount\nmaybe\noptions\nwindow-size\n")
        #expect(try home.dconf(["dump", "/"]) == expectedDump(Dictionary(uniqueKeysWithValues: samples.map { ($0.key, $0.variant.printed) })))
        #expect(try home.dconf(["read", "/org/gnome/missing"]) == "")
    }
}
