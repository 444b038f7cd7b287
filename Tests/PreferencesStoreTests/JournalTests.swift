import Foundation
import GRDB
import PreferencesModel
@_spi(Testing) import PreferencesStore
import Synchronization
import Testing

/// The change journal kept in the store (contract 0.3, History).
@Suite("Change journal")
struct JournalTests {

    @Test("a store written before the journal is migrated: its data stays, and its first change records the old value")
    func migratesV1Store() throws {
        let domain = try DomainName("com.example.Journal")
        let temporary = try TemporaryDirectory()
        try writeStoreDatabase(in: temporary.store) { db in
            try db.execute(sql: storeSchemaV1)
            try db.execute(
                sql: "INSERT INTO preference VALUES (?, ?, ?)",
                arguments: [domain.rawValue, "k", Data(PropertyListValue.string("old").encoded())])
        }
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        #expect(try store.loadAll() == [domain: ["k": .string("old")]])
        #expect(try store.history(domain: domain, key: nil, after: 0, limit: 100, maxBytes: 1 << 20).isEmpty)
        try store.commitAndWait([.set(domain, key: "k", value: .string("new"))]).get()
        let entries = try store.history(domain: domain, key: nil, after: 0, limit: 100, maxBytes: 1 << 20)
        #expect(entries.map(\.previous) == [.string("old")] && entries.map(\.value) == [.string("new")])
        #expect(entries.first?.who == "unknown")
        let targets = try #require(try store.revertTargets(domain: domain, key: nil, to: 0))
        #expect(targets == ["k": .some(.string("old"))])
    }

    @Test("sequence numbers keep increasing past dropped changes and a reopen; a reply never splits a change")
    func sequencesAndPages() throws {
        let domain = try DomainName("com.example.Journal")
        let temporary = try TemporaryDirectory()
        let bounds = HistoryBounds(entries: 2, bytes: 1 << 20)
        var store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger, historyBounds: bounds)
        for number in 1...3 { try store.commitAndWait([.set(domain, key: "k", value: .integer(Int64(number)))]).get() }
        store.close()
        store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger, historyBounds: bounds)
        defer { store.close() }
        try store.commitAndWait([.set(domain, key: "a", value: .integer(1)), .set(domain, key: "b", value: .integer(2))]).get()
        #expect(store.historyTotals.entries == 2)
        let entries = try store.history(domain: domain, key: nil, after: 0, limit: 1, maxBytes: 1 << 20)
        // Limit 1, but the one change has two keys: it comes whole.
        #expect(entries.map(\.sequence) == [4, 4] && entries.map(\.key) == ["a", "b"])
        #expect(try store.revertTargets(domain: domain, key: nil, to: 2) == nil, "change 3 was dropped")
        #expect(try store.revertTargets(domain: domain, key: nil, to: 3) == ["a": PropertyListValue?.none, "b": PropertyListValue?.none])
    }

    @Test("a commit is told the sequence numbers of its changes, one per domain, before it completes; a no-op is told none")
    func recordedSequences() throws {
        let first = try DomainName("com.example.Journal")
        let second = try DomainName("com.example.Other")
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        let told = Mutex<[[UInt64]]>([])
        func commit(_ mutations: [StoreMutation]) throws {
            let done = DispatchSemaphore(value: 0)
            let result = Mutex<Result<Void, StoreError>?>(nil)
            let recorded: @Sendable ([UInt64]) -> Void = { sequences in told.withLock { $0.append(sequences) } }
            store.commit(mutations, who: "test", recorded: recorded) { outcome in
                // The sequence numbers came first.
                #expect(told.withLock { !$0.isEmpty })
                result.withLock { $0 = outcome }
                done.signal()
            }
            done.wait()
            try #require(result.withLock { $0 }).get()
        }
        try commit([.set(first, key: "k", value: .integer(1))])
        try commit([.set(first, key: "k", value: .integer(2)), .set(second, key: "k", value: .integer(3))])
        try commit([.set(first, key: "k", value: .integer(2))])
        #expect(told.withLock { $0 } == [[1], [2, 3], []])
        let entries = try store.history(domain: nil, key: nil, after: 0, limit: 100, maxBytes: 1 << 20)
        #expect(entries.map(\.sequence) == [1, 2, 3] && entries.map(\.domain) == [first, first, second])
    }
}
