import Foundation
import GRDB
import PreferencesModel
@_spi(Testing) import PreferencesStore
import Testing

/// The journal numbers its changes without AUTOINCREMENT (schema v3): a commit no
/// longer rewrites `sqlite_sequence`, and sequences still never repeat.
@Suite("Journal sequence")
struct JournalSequenceTests {
    @Test("a one-key write adds two pages to the WAL: the key's and the journal's newest")
    func oneKeyWriteFrames() throws {
        let domain = try DomainName("com.example.Frames")
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        for number in 1...3 { try store.commitAndWait([.set(domain, key: "k", value: .integer(Int64(number)))]).get() }
        try store.restartWAL()
        try store.commitAndWait([.set(domain, key: "k", value: .integer(4))]).get()
        // Four with the journal in two tables and a domain index, five with AUTOINCREMENT's
        // sqlite_sequence page too.
        #expect(try store.walFrames() == 2)
    }

    @Test("a v2 store keeps its journal, and its next change is numbered past every sequence it issued")
    func migratesV2Sequence() throws {
        let domain = try DomainName("com.example.Sequence")
        let temporary = try TemporaryDirectory()
        // The schema as the history round left it, with changes 3…5 kept, 1…2 dropped, and
        // AUTOINCREMENT's counter at 9 (changes 6…9 issued and gone).
        try writeStoreDatabase(in: temporary.store) { db in
            try db.execute(sql: storeSchemaV1)
            try db.execute(
                sql: """
                    INSERT INTO grdb_migrations(identifier) VALUES ('v2-history');
                    CREATE TABLE history_change(sequence INTEGER PRIMARY KEY AUTOINCREMENT, time INTEGER NOT NULL,
                        domain TEXT NOT NULL, who TEXT NOT NULL, stored INTEGER NOT NULL, entries INTEGER NOT NULL,
                        bytes INTEGER NOT NULL);
                    CREATE INDEX history_change_domain ON history_change(domain, sequence);
                    CREATE TABLE history_entry(sequence INTEGER NOT NULL, key TEXT NOT NULL, value BLOB, previous BLOB,
                        PRIMARY KEY(sequence, key)) WITHOUT ROWID;
                    CREATE TABLE history_horizon(id INTEGER PRIMARY KEY CHECK (id = 1), dropped INTEGER NOT NULL);
                    INSERT INTO history_horizon(id, dropped) VALUES (1, 2);
                    """)
            for sequence in 3...5 {
                try db.execute(
                    sql: "INSERT INTO history_change VALUES (?, 0, ?, 'test', 1, 1, 60)",
                    arguments: [sequence, domain.rawValue])
                try db.execute(
                    sql: "INSERT INTO history_entry VALUES (?, 'k', ?, NULL)",
                    arguments: [sequence, Data(PropertyListValue.integer(Int64(sequence)).encoded())])
            }
            try db.execute(sql: "UPDATE sqlite_sequence SET seq = 9 WHERE name = 'history_change'")
            try db.execute(
                sql: "INSERT INTO preference VALUES (?, 'k', ?)",
                arguments: [domain.rawValue, Data(PropertyListValue.integer(5).encoded())])
        }
        var store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        #expect(try store.history(domain: domain, key: nil, after: 0, limit: 100, maxBytes: 1 << 20).map(\.sequence) == [3, 4, 5])
        #expect(try store.history(domain: domain, key: nil, after: 0, limit: 100, maxBytes: 1 << 20).map(\.value) == [.integer(3), .integer(4), .integer(5)])
        // The bytes each change counted come along into the one journal table.
        #expect(store.historyTotals.entries == 3 && store.historyTotals.bytes == 180)
        try store.commitAndWait([.set(domain, key: "k", value: .integer(10))]).get()
        #expect(try store.history(domain: domain, key: nil, after: 5, limit: 100, maxBytes: 1 << 20).map(\.sequence) == [10])
        store.close()
        // Everything dropped (bounds of one entry): the next change still goes past 10.
        store = try DomainStore(
            directory: temporary.store, logger: LogRecorder().logger,
            historyBounds: HistoryBounds(entries: 1, bytes: 1 << 20))
        defer { store.close() }
        try store.commitAndWait([.set(domain, key: "k", value: .integer(11))]).get()
        try store.commitAndWait([.set(domain, key: "k", value: .integer(12))]).get()
        #expect(try store.history(domain: domain, key: nil, after: 0, limit: 100, maxBytes: 1 << 20).map(\.sequence) == [12])
    }
}

/// The WAL is made full-size after the first commit, so later commits write over allocated
/// blocks and their syncs carry no change of the file's size.
@Suite("WAL preallocation")
struct WALPreallocationTests {
    @Test("a fresh store's WAL is full-size once it has committed, and stays so; its data reads back after a reopen")
    func walIsFullSize() throws {
        let domain = try DomainName("com.example.WAL")
        let temporary = try TemporaryDirectory()
        var store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        let wal = store.databaseURL.path + "-wal"
        func size() throws -> Int { try FileManager.default.attributesOfItem(atPath: wal)[.size] as? Int ?? -1 }
        try store.commitAndWait([.set(domain, key: "k", value: .integer(1))]).get()
        // Made full-size on the writer queue after the first commit's completion: wait for
        // that queue (pageCount runs on it).
        _ = try store.pageCount()
        #expect(try size() == DomainStore.preallocatedWALBytes)
        for number in 2...50 { try store.commitAndWait([.set(domain, key: "k", value: .integer(Int64(number)))]).get() }
        #expect(try size() == DomainStore.preallocatedWALBytes)
        store.close()
        store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        #expect(try store.loadAll() == [domain: ["k": .integer(50)]])
    }
}
