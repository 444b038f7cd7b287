import Foundation
import GRDB
import PreferencesModel
@_spi(Testing) import PreferencesStore
import Testing

@Suite("Store files on disk")
struct StoreFileTests {
    /// Makes a store with enough rows to span many pages, then closes it; its database
    /// made beforehand with pages of `pageSize` bytes, when given (prefsd makes 4096).
    func makeStore(at directory: URL, pageSize: Int? = nil) throws {
        if let pageSize {
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            try DatabaseQueue(path: directory.appendingPathComponent("store.sqlite").path).writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA page_size = \(pageSize); VACUUM")
            }
        }
        let store = try DomainStore(directory: directory, logger: LogRecorder().logger)
        let name = domain("com.example.Filler")
        try store.commitAndWait(
            (0..<2_000).map {
                .set(name, key: "key\($0)", value: .string(String(repeating: "v", count: 100)))
            }
        ).get()
        store.close()
    }

    func expectRecovery(damaging: (URL) throws -> Data) throws {
        let temporary = try TemporaryDirectory()
        try makeStore(at: temporary.store)
        let database = temporary.store.appendingPathComponent("store.sqlite")
        let damagedBytes = try damaging(database)

        let log = LogRecorder()
        let store = try DomainStore(directory: temporary.store, logger: log.logger)
        defer { store.close() }
        let moved = try #require(store.recoveredFrom)
        #expect(moved.deletingLastPathComponent().path == temporary.store.path)
        #expect(moved.lastPathComponent.wholeMatch(of: /store\.sqlite\.corrupt-\d{8}T\d{6}Z/) != nil, "\(moved)")
        #expect(try Data(contentsOf: moved) == damagedBytes, "the damaged copy keeps its bytes")
        #expect(try store.loadAll().isEmpty)
        let message = try #require(log.messages.first { $0.contains(moved.path) })
        #expect(message.contains(database.path))

        // The fresh store works and is kept.
        let name = domain("com.example.Fresh")
        try store.commitAndWait([.set(name, key: "k", value: .integer(1))]).get()
        store.close()
        let reopened = try DomainStore(directory: temporary.store, logger: log.logger)
        defer { reopened.close() }
        #expect(reopened.recoveredFrom == nil)
        #expect(try reopened.loadAll() == [name: ["k": .integer(1)]])
    }

    @Test("a store overwritten with garbage is moved aside and a fresh one starts")
    func garbage() throws {
        try expectRecovery { database in
            var generator = SystemRandomNumberGenerator()
            let garbage = Data((0..<8192).map { _ in UInt8.random(in: 0...255, using: &generator) })
            try garbage.write(to: database)
            return garbage
        }
    }

    @Test("a store truncated to half is moved aside and a fresh one starts")
    func truncated() throws {
        try expectRecovery { database in
            let whole = try Data(contentsOf: database)
            #expect(whole.count > 64 * 1024)
            let half = whole.prefix(whole.count / 2)
            try half.write(to: database)
            return half
        }
    }

    /// Which leaf of a table's tree to damage.
    enum Leaf: String, CaseIterable, Sendable {
        /// One from the middle, in key order.
        case middle
        /// The last in key order: the journal's newest change.
        case last
    }

    /// Overwrites a leaf page of `table` in the closed store's `database` (where the leaves
    /// are in key order, as SQLite's dbstat tells by their path from the root).
    func damageLeaf(_ leaf: Leaf = .middle, of table: String, in database: URL, pageSize: Int = 4096) throws -> Data {
        let pages = try DatabaseQueue(path: database.path).read { db in
            try Int.fetchAll(db, sql: "SELECT pageno FROM dbstat WHERE name = ? AND pagetype = 'leaf' ORDER BY path", arguments: [table])
        }
        #expect(pages.count > 2, "\(table) has too few leaves to choose among: \(pages)")
        let chosen = leaf == .middle ? pages.dropFirst(pages.count / 2).first : pages.last
        let page = try #require(chosen, "\(table) has no leaf page")
        var bytes = try Data(contentsOf: database)
        let offset = (page - 1) * pageSize
        bytes.replaceSubrange(offset..<offset + pageSize, with: Data(repeating: 0x5A, count: pageSize))
        try bytes.write(to: database)
        return bytes
    }

    @Test("a damaged page of the preferences is found at open: the store is moved aside")
    func damagedPreferences() throws {
        try expectRecovery { database in try damageLeaf(of: "preference", in: database) }
    }

    /// The journal is checked after the store opens, before its first commit: a damaged
    /// journal costs its history, not the preferences. Its newest change is read as the
    /// store opens, to number the next: when that page is the damaged one, the next change
    /// is numbered past any it can have issued. (A store of pages other than prefsd's 4 KiB
    /// is started afresh too: SQLite's backup needs the same page size on both sides.)
    @Test(
        "a damaged page of the journal is found before the first commit: the preferences are kept, the journal starts afresh",
        arguments: Leaf.allCases, [4096, 8192])
    func damagedJournal(_ leaf: Leaf, pageSize: Int) throws {
        let temporary = try TemporaryDirectory()
        try makeStore(at: temporary.store, pageSize: pageSize)
        let database = temporary.store.appendingPathComponent("store.sqlite")
        let damaged = try damageLeaf(leaf, of: "history", in: database, pageSize: pageSize)

        let log = LogRecorder()
        let store = try DomainStore(directory: temporary.store, logger: log.logger)
        #expect(store.recoveredFrom == nil)
        let filler = domain("com.example.Filler")
        let kept = try store.loadAll()
        #expect(kept[filler]?.count == 2_000)
        #expect(kept[filler]?["key1999"] == .string(String(repeating: "v", count: 100)))
        // Waits for the writer's first job, the journal's check.
        #expect(store.historyTotals.entries == 0)
        #expect(try store.history(domain: nil, key: nil, after: 0, limit: 100, maxBytes: 1 << 20).isEmpty)

        // A copy of the store as it was is kept, private, and named in the log.
        let copies = try FileManager.default.contentsOfDirectory(atPath: temporary.store.path).filter {
            $0.wholeMatch(of: /store\.sqlite\.corrupt-\d{8}T\d{6}Z/) != nil
        }
        let copy = temporary.store.appendingPathComponent(try #require(copies.first, "no copy of the damaged store"))
        #expect(copies.count == 1)
        #expect(try Data(contentsOf: copy) == damaged, "the copy keeps the damaged bytes")
        #expect(try mode(of: copy.path) == 0o600)
        let asideFiles = try FileManager.default.contentsOfDirectory(atPath: temporary.store.path).filter { $0.contains("corrupt") }
        #expect(Set(asideFiles).isSubset(of: [copy.lastPathComponent, copy.lastPathComponent + "-wal"]), "\(asideFiles)")
        let message = try #require(log.messages.first { $0.contains(copy.path) })
        #expect(message.contains(database.path) && message.contains("journal starts afresh"), "\(message)")

        // The store takes writes and records them, numbered after what the old journal issued.
        try store.commitAndWait([.set(filler, key: "after", value: .integer(1))]).get()
        let recorded = try store.history(domain: nil, key: nil, after: 0, limit: 100, maxBytes: 1 << 20)
        #expect(recorded.map(\.key) == ["after"])
        let sequence = try #require(recorded.first?.sequence)
        switch leaf {
        case .middle:
            // Found by the check; the journal's newest change was read as the store opened.
            #expect(sequence == 2)
        case .last:
            // Not read: numbered past the clock's microseconds, past any sequence issued.
            #expect(sequence > UInt64(1_700_000_000) * 1_000_000, "\(sequence)")
        }
        store.close()

        // The repaired store opens cleanly, whole, with nothing more moved or copied aside.
        let reopened = try DomainStore(directory: temporary.store, logger: log.logger)
        defer { reopened.close() }
        #expect(reopened.historyTotals.entries == 1)
        #expect(try reopened.loadAll()[filler]?.count == 2_001)
        let (wholeCheck, pages) = try DatabaseQueue(path: database.path).read { db in
            (try String.fetchAll(db, sql: "PRAGMA integrity_check"), try Int.fetchOne(db, sql: "PRAGMA page_size"))
        }
        #expect(wholeCheck == ["ok"])
        #expect(pages == pageSize)
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: temporary.store.path).filter { $0.contains("corrupt") }.sorted()
                == asideFiles.sorted())
    }

    @Test("the directory is 0700 and the database files 0600")
    func permissions() throws {
        let temporary = try TemporaryDirectory()
        // An existing directory with looser bits is tightened.
        try FileManager.default.createDirectory(
            at: temporary.store, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        try store.commitAndWait([.set(domain("com.example.Modes"), key: "k", value: .boolean(true))]).get()
        #expect(try mode(of: temporary.store.path) == 0o700)
        let database = store.databaseURL.path
        #expect(try mode(of: database) == 0o600)
        for suffix in ["-wal", "-shm"] where FileManager.default.fileExists(atPath: database + suffix) {
            #expect(try mode(of: database + suffix) == 0o600, "\(suffix)")
        }
        store.close()

        // A new directory, nested, is created 0700.
        let nested = temporary.url.appendingPathComponent("a/b/prefsd")
        let other = try DomainStore(directory: nested, logger: LogRecorder().logger)
        other.close()
        #expect(try mode(of: nested.path) == 0o700)
        #expect(try mode(of: other.databaseURL.path) == 0o600)
    }

    @Test("a database migrated by a newer prefsd is refused and left untouched")
    func newerSchema() throws {
        let temporary = try TemporaryDirectory()
        try makeStore(at: temporary.store)
        let path = temporary.store.appendingPathComponent("store.sqlite").path
        try writeStoreDatabase(in: temporary.store) { db in
            try db.execute(sql: "INSERT INTO grdb_migrations(identifier) VALUES ('v2-from-the-future')")
        }
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let listing = try FileManager.default.contentsOfDirectory(atPath: temporary.store.path).sorted()

        do {
            let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
            store.close()
            Issue.record("a newer database was opened")
        } catch {
            guard case .newerSchema(let refused) = error else {
                Issue.record("expected .newerSchema, got \(error)")
                return
            }
            #expect(refused == path)
            #expect(error.description.contains("newer version of prefsd"))
        }
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.store.path).sorted() == listing)
    }

    @Test("error descriptions say what to do")
    func descriptions() {
        #expect(StoreError.closed.description.contains("closed"))
        #expect(StoreError.cannotOpen(path: "/x/store.sqlite", reason: "why").description.contains("/x/store.sqlite"))
        #expect(
            StoreError.writeFailed(reason: "the disk is full: free space on /x").description
                == "cannot write the preferences store: the disk is full: free space on /x")
    }
}
