import DconfFormats
import GVDB
import Testing

/// ``DconfDatabaseFile``'s rules beside GVDB's: what is a key, where locks go, names in
/// any script.
@Suite("dconf database file")
struct DconfDatabaseFileTests {
    let string = { (text: String) throws -> GVDBValue in try GVDBValue(typeString: "s", bytes: Array(text.utf8) + [0]) }

    @Test("locks go in a nested .locks table, as dconf compile writes them")
    func locks() throws {
        let bytes = try DconfDatabaseFile.file(["/a/b": string("x")], locks: ["/a/b", "/a/c"])
        #expect(try DconfDatabaseFile.locks(in: bytes) == ["/a/b", "/a/c"])
        #expect(try DconfDatabaseFile.values(in: bytes) == ["/a/b": string("x")])
        #expect(try DconfDatabaseFile.locks(in: DconfDatabaseFile.file(["/a/b": string("x")])) == [])
    }

    @Test("what is not a dconf key is refused")
    func refusals() throws {
        for key in ["a/b", "/a/", "/a//b", "", "/a\u{0}b"] {
            #expect(throws: GVDBError.self, "\(key)") { try DconfDatabaseFile.file([key: string("x")]) }
        }
    }

    @Test("the key hash is djb's over signed bytes, as GLib's")
    func hash() throws {
        // Hash values gvdb-builder stored in a file dconf-service wrote (/a/, /a/b, /).
        let file = try GVDBFile(bytes: DconfDatabaseFile.file(["/a/b": string("x")]))
        #expect(Set(try file.names()) == ["/", "/a/", "/a/b"])
        let unicode = try DconfDatabaseFile.file(["/ä/ü": string("x")])
        #expect(try DconfDatabaseFile.values(in: unicode) == ["/ä/ü": string("x")])
    }
}
