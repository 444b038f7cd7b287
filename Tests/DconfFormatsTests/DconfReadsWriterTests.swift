import BusTestSupport
import DconfFormats
import Foundation
import GVDB
import Testing

/// Files this module writes, read by dconf's own reader (the `dconf` command, no service).
@Suite("dconf reads what the writer writes")
struct DconfReadsWriterTests {
    @Test("dconf read, list and dump give back exactly the values written")
    func readListDump() throws {
        let samples = try sampleValues()
        let home = try DconfHome()
        defer { home.remove() }
        try home.install(DconfDatabaseFile.file(Dictionary(uniqueKeysWithValues: try samples.map { ($0.key, try $0.variant.value()) })))

        for (key, variant) in samples {
            #expect(try home.dconf(["read", key]) == variant.printed + "\n", "dconf read \(key)")
        }
        #expect(try home.dconf(["list", "/"]) == "com/\norg/\ntop-level\n")
        #expect(try home.dconf(["list", "/org/gnome/desktop/"]) == "interface/\nperipherals/\n")
        #expect(try home.dconf(["list", "/com/example/app/"]) == "big\ncount\nmaybe\noptions\nwindow-size\n")
        let dump = try home.dconf(["dump", "/"])
        #expect(dump == expectedDump(Dictionary(uniqueKeysWithValues: samples.map { ($0.key, $0.variant.printed) })))
        #expect(try home.dconf(["read", "/org/gnome/missing"]) == "")
    }

    @Test("an empty database is a database to dconf: nothing to list or dump")
    func empty() throws {
        let home = try DconfHome()
        defer { home.remove() }
        let bytes = try DconfDatabaseFile.file([:])
        #expect(bytes.count == 32)
        try home.install(bytes)
        #expect(try home.dconf(["list", "/"]) == "")
        #expect(try home.dconf(["dump", "/"]) == "")
    }

    @Test("two thousand keys in a deep tree: every one read back through dconf dump")
    func many() throws {
        let value = try #require(try GLibVariant.parse([("i", "7")]).first)
        var values: [String: GVDBValue] = [:]
        var printed: [String: String] = [:]
        for index in 0..<2000 {
            let key = "/org/example/d\(index % 7)/e\(index % 13)/key-\(index)"
            values[key] = try value.value()
            printed[key] = value.printed
        }
        let home = try DconfHome()
        defer { home.remove() }
        try home.install(DconfDatabaseFile.file(values))
        #expect(try home.dconf(["dump", "/"]) == expectedDump(printed))
        #expect(try home.dconf(["read", "/org/example/d3/e6/key-1228"]) == "7\n")
    }
}
