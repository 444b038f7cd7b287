import BusTestSupport
import Foundation
import GVDB
import Testing

@testable import DconfFormats

/// Files the real `dconf-service` writes, read by this module's reader and compared byte for
/// byte with what its writer makes of the same content.
@Suite("dconf-service's files, read and rewritten", .serialized)
struct DconfServiceTests {
    @Test("one dconf load on an empty database: read back exactly, and rewritten byte for byte")
    func load() throws {
        let samples = try sampleValues()
        let service = try DconfService()
        defer { service.stop() }
        let keyFile = expectedDump(Dictionary(uniqueKeysWithValues: samples.map { ($0.key, $0.variant.printed) }))
        try service.home.dconf(["load", "/"], input: keyFile)
        let written = try service.home.database()

        let read = try DconfDatabaseFile.values(in: written)
        #expect(read == Dictionary(uniqueKeysWithValues: try samples.map { ($0.key, try $0.variant.value()) }))
        #expect(try DconfDatabaseFile.file(read) == written)
    }

    @Test("a dconf load of 600 keys in 91 directories: the same bytes (GLib's tables resized many times over)")
    func bigLoad() throws {
        let service = try DconfService()
        defer { service.stop() }
        let keys = (0..<600).map { "/org/example/d\($0 % 7)/e\($0 % 13)/key-\($0)" }
        try service.home.dconf(["load", "/"], input: expectedDump(Dictionary(uniqueKeysWithValues: keys.enumerated().map { ($1, "\($0)") })))
        let written = try service.home.database()
        let read = try DconfDatabaseFile.values(in: written)
        #expect(read.count == 600)
        #expect(try DconfDatabaseFile.file(read) == written)
    }

    @Test("dconf write one key at a time: the changeset model gives dconf-service's bytes", arguments: [1, 5, 40])
    func writes(count: Int) throws {
        let service = try DconfService()
        defer { service.stop() }
        let keys = (0..<count).map { "/org/example/group\($0 % 4)/key\($0)" }
        var changeset = DconfChangesetTable()
        for (index, key) in keys.enumerated() {
            try service.home.dconf(["write", key, "\(index)"])
            changeset = changeset.copied()
            changeset.set(key)
        }
        let written = try service.home.database()
        let read = try DconfDatabaseFile.values(in: written)
        let expected = try GLibVariant.parse(keys.indices.map { ("i", "\($0)") })
        #expect(read == Dictionary(uniqueKeysWithValues: zip(keys, try expected.map { try $0.value() })))
        let inOrder = try changeset.order.map { key in (key: key, value: try #require(read[key])) }
        #expect(try DconfDatabaseFile.file(inChangesetOrder: inOrder) == written)
        // The canonical file (all content as one change) holds the same; for one key it is
        // also the same bytes.
        if count == 1 { #expect(try DconfDatabaseFile.file(read) == written) }
        #expect(try DconfDatabaseFile.values(in: DconfDatabaseFile.file(read)) == read)
    }

    @Test("after resets of a key and of a directory, the reader sees what dconf-service keeps")
    func resets() throws {
        let service = try DconfService()
        defer { service.stop() }
        for index in 0..<12 {
            try service.home.dconf(["write", "/org/example/group\(index % 3)/key\(index)", "\(index)"])
        }
        try service.home.dconf(["reset", "/org/example/group0/key3"])
        try service.home.dconf(["reset", "-f", "/org/example/group1/"])
        let read = try DconfDatabaseFile.values(in: service.home.database())
        let kept = (0..<12).filter { $0 % 3 != 1 && $0 != 3 }
        let expected = try GLibVariant.parse(kept.map { ("i", "\($0)") })
        #expect(read == Dictionary(uniqueKeysWithValues: zip(kept.map { "/org/example/group\($0 % 3)/key\($0)" }, try expected.map { try $0.value() })))
        // No directory is left behind for the keys reset: dconf list no longer shows it.
        #expect(try service.home.dconf(["list", "/org/example/"]) == "group0/\ngroup2/\n")
        #expect(try GVDBFile(bytes: DconfDatabaseFile.file(read)).list("/org/example/") == ["group0/", "group2/"])
    }

    @Test("dconf-service takes in a database the writer wrote and keeps every value")
    func serviceReadsWriter() throws {
        let samples = try sampleValues()
        let service = try DconfService()
        defer { service.stop() }
        let values = Dictionary(uniqueKeysWithValues: try samples.map { ($0.key, try $0.variant.value()) })
        try service.home.install(DconfDatabaseFile.file(values))
        try service.home.dconf(["write", "/com/example/added", "true"])
        var expected = values
        expected["/com/example/added"] = try #require(try GLibVariant.parse([("b", "true")]).first).value()
        #expect(try DconfDatabaseFile.values(in: service.home.database()) == expected)
    }
}
