import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

extension Reliability {
    /// A store damaged on disk is moved aside, kept and logged; prefsd starts.
    @Suite("Corruption")
    struct Corruption {
        enum Damage: String, CaseIterable, Sendable {
            /// The whole file replaced by random bytes.
            case garbage
            /// A valid store cut to half its length.
            case truncatedToHalf
            /// A valid store cut inside its first page.
            case truncatedInHeader
            /// A page from the middle of the preferences' table overwritten: the store still
            /// opens, but fails `PRAGMA quick_check`. (A damaged journal costs only the
            /// history: see `damagedJournal`.)
            case overwrittenPage
        }

        @Test("a damaged store is moved aside with a timestamped name, logged, and prefsd starts", arguments: Damage.allCases)
        func damagedStore(_ damage: Damage) async throws {
            let fixture = try await ServiceFixture()
            let database = try await fillAndStop(fixture)
            var bytes = try Data(contentsOf: database)
            #expect(bytes.count > 64 * 4096, "the store is too small to damage in the middle: \(bytes.count) bytes")
            var generator = SystemRandomNumberGenerator()
            switch damage {
            case .garbage:
                bytes = Data((0..<bytes.count).map { _ in UInt8.random(in: 0...255, using: &generator) })
            case .truncatedToHalf:
                bytes = bytes.prefix(bytes.count / 2)
            case .truncatedInHeader:
                bytes = bytes.prefix(1000)
            case .overwrittenPage:
                bytes = try overwritingLeaf(of: "preference", in: database, bytes: bytes)
            }
            try bytes.write(to: database)

            try await fixture.startService()
            let after = ServiceClient(connection: try fixture.connect())
            defer { after.connection.close() }
            // It serves, with a fresh, empty store that takes writes.
            #expect(try await after.domains() == [])
            try await after.write("com.example.Corrupt", "fresh", .integer(1))
            #expect(try await after.readValue("com.example.Corrupt", "fresh") == .integer(1))

            let copies = fixture.damagedCopies
            #expect(copies.count == 1, "expected one damaged copy, found \(fixture.storeEntries)")
            guard let copy = copies.first else { return }
            #expect(copy.wholeMatch(of: /store\.sqlite\.corrupt-\d{8}T\d{6}Z(-\d+)?/) != nil, "\(copy) has no timestamp")
            let moved = fixture.storeDirectory.appendingPathComponent(copy)
            #expect(try Data(contentsOf: moved) == bytes, "the damaged copy is not the original bytes")
            #expect(fixture.log.contains(moved.path), "the log does not name \(moved.path):\n\(fixture.log)")

            // A restart keeps the copy and does not move the fresh store aside.
            #expect(fixture.stopService() == 0)
            try await fixture.startService()
            #expect(fixture.damagedCopies == copies)
            #expect(FileManager.default.fileExists(atPath: moved.path))
            let again = ServiceClient(connection: try fixture.connect())
            defer { again.connection.close() }
            #expect(try await again.readValue("com.example.Corrupt", "fresh") == .integer(1))
            print("reliability.corruption damage=\(damage.rawValue) moved_to=\(copy) original_bytes_kept=true")
        }

        @Test("a damaged page of the journal costs its history, not the preferences: they are served, a copy of the store is kept, the journal starts afresh")
        func damagedJournal() async throws {
            let fixture = try await ServiceFixture()
            let database = try await fillAndStop(fixture)
            let damaged = try overwritingLeaf(of: "history", in: database, bytes: Data(contentsOf: database))
            try damaged.write(to: database)

            try await fixture.startService()
            let after = ServiceClient(connection: try fixture.connect())
            defer { after.connection.close() }
            #expect(try await after.domains() == ["com.example.Corrupt"])
            #expect(try await after.readValue("com.example.Corrupt", "k299") == .data(Data(repeating: UInt8(299 % 251), count: 1024)))
            #expect(try await after.readDomain("com.example.Corrupt").count == 300)
            try await after.write("com.example.Corrupt", "fresh", .integer(1))
            let history = try await after.perform(PreferencesCall.history("com.example.Corrupt"))
            #expect(history.map(\.key) == ["fresh"], "the journal holds only what came after: \(history.map(\.key))")
            #expect(history.first.map { $0.sequence > 300 } == true, "\(history)")

            let copies = fixture.damagedCopies
            #expect(copies.count == 1, "expected one copy of the damaged store, found \(fixture.storeEntries)")
            guard let copy = copies.first else { return }
            let kept = fixture.storeDirectory.appendingPathComponent(copy)
            #expect(try Data(contentsOf: kept) == damaged, "the copy is not the damaged store's bytes")
            #expect(fixture.log.contains(kept.path), "the log does not name \(kept.path):\n\(fixture.log)")

            // A restart finds the store whole: nothing more set aside, nothing lost.
            #expect(fixture.stopService() == 0)
            #expect(try integrityCheck(database) == "ok")
            try await fixture.startService()
            #expect(fixture.damagedCopies == copies)
            let again = ServiceClient(connection: try fixture.connect())
            defer { again.connection.close() }
            #expect(try await again.readValue("com.example.Corrupt", "fresh") == .integer(1))
            #expect(try await again.readDomain("com.example.Corrupt").count == 301)
            print("reliability.corruption damage=journal-page preferences_kept=301 history_after=\(history.count)")
        }
    }
}

/// Writes 300 values of 1 KiB (`k0`…`k299` of `com.example.Corrupt`, enough for a store of a
/// few hundred pages) through `fixture`'s prefsd, stops it, and returns its database file.
func fillAndStop(_ fixture: ServiceFixture) async throws -> URL {
    let client = ServiceClient(connection: try fixture.connect())
    for index in 0..<300 {
        try await client.write("com.example.Corrupt", "k\(index)", .data(Data(repeating: UInt8(index % 251), count: 1024)))
    }
    client.connection.close()
    #expect(fixture.stopService() == 0)
    return fixture.storeDirectory.appendingPathComponent("store.sqlite")
}

/// `bytes` (the closed store `database`) with a leaf page from the middle of `table`
/// overwritten by random bytes; where the leaves are, in key order, the `sqlite3` tool reads
/// from SQLite's dbstat.
func overwritingLeaf(of table: String, in database: URL, bytes: Data) throws -> Data {
    let query = "SELECT pageno FROM dbstat WHERE name = '\(table)' AND pagetype = 'leaf' ORDER BY path;"
    let result = try runCommand("sqlite3", [database.path, query])
    let pages = result.stdout.split(separator: "\n").compactMap { Int($0) }
    #expect(pages.count > 2, "\(table) has too few leaf pages: \(result.stdout) \(result.stderr)")
    let page = try #require(pages.dropFirst(pages.count / 2).first, "\(table) has no leaf page")
    let pageSize = 4096
    var generator = SystemRandomNumberGenerator()
    var damaged = bytes
    let garbage = (0..<pageSize).map { _ in UInt8.random(in: 0...255, using: &generator) }
    damaged.replaceSubrange((page - 1) * pageSize..<page * pageSize, with: garbage)
    return damaged
}
