import Dispatch
import Foundation
import GRDB
import Logging
import PreferencesModel
@_spi(Testing) import PreferencesStore
import Synchronization
import Testing

@Suite("Durable domain store")
struct DomainStoreTests {
    @Test("set, remove and removeDomain survive close and reopen, for every value type")
    func roundTrip() throws {
        let temporary = try TemporaryDirectory()
        let log = LogRecorder()
        let editor = domain("com.example.Editor")
        let global = DomainName.global
        let doomed = domain("org.example.Doomed")
        do {
            let store = try DomainStore(directory: temporary.store, logger: log.logger)
            #expect(store.recoveredFrom == nil)
            #expect(store.databaseURL.lastPathComponent == "store.sqlite")
            #expect(try store.loadAll().isEmpty)
            var mutations: [StoreMutation] = everyKindOfValue.map { .set(editor, key: $0.key, value: $0.value) }
            mutations += [
                .set(global, key: "AppleLocale", value: .string("fr_FR")),
                .set(global, key: "gone", value: .integer(1)),
                .set(doomed, key: "a", value: .integer(1)),
                .set(doomed, key: "b", value: .integer(2)),
            ]
            try store.commitAndWait(mutations).get()
            try store.commitAndWait([
                .remove(global, key: "gone"),
                .remove(global, key: "never-there"),
                .removeDomain(doomed),
                .set(editor, key: "string", value: .string("replaced")),
            ]).get()
            store.close()
        }
        let reopened = try DomainStore(directory: temporary.store, logger: log.logger)
        defer { reopened.close() }
        var expectedEditor = everyKindOfValue
        expectedEditor["string"] = .string("replaced")
        let loaded = try reopened.loadAll()
        #expect(loaded == [editor: expectedEditor, global: ["AppleLocale": .string("fr_FR")]])
        #expect(reopened.recoveredFrom == nil)
    }

    @Test("loading groups rows by domain, leaving out rows with a bad domain name or value and saying so")
    func loadsRowsByDomain() throws {
        let temporary = try TemporaryDirectory()
        let log = LogRecorder()
        // Names longer than 15 bytes, so no two of them share a small-string form.
        let first = domain("org.example.FirstApplication")
        let second = domain("org.example.FirstApplicationToo")
        do {
            let store = try DomainStore(directory: temporary.store, logger: log.logger)
            try store.commitAndWait([
                .set(first, key: "a", value: .integer(1)), .set(first, key: "b", value: .string("two")),
                .set(second, key: "a", value: .real(3)), .set(.global, key: "g", value: .boolean(true)),
            ]).get()
            store.close()
        }
        // Rows another program could have left: a domain name prefsd refuses, a value it
        // cannot decode, between domains it keeps.
        try writeStoreDatabase(in: temporary.store) { db in
            try db.execute(sql: "INSERT INTO preference VALUES (?, ?, ?)", arguments: ["bad name", "x", Data(PropertyListValue.integer(1).encoded())])
            try db.execute(sql: "INSERT INTO preference VALUES (?, ?, ?)", arguments: [first.rawValue, "broken", Data([0xFF, 0x00])])
        }

        let reopened = try DomainStore(directory: temporary.store, logger: log.logger)
        defer { reopened.close() }
        let loaded = try reopened.loadAll()
        #expect(
            loaded == [
                first: ["a": .integer(1), "b": .string("two")],
                second: ["a": .real(3)],
                .global: ["g": .boolean(true)],
            ])
        let report = log.messages.first { $0.contains("cannot be read and were left out") }
        #expect(report?.contains("2 stored preferences") == true, "\(log.messages)")
        #expect(report?.contains("invalid domain name \"bad name\"") == true, "\(log.messages)")
        #expect(report?.contains("\"broken\"") == true, "\(log.messages)")
    }

    @Test("mutations of one batch apply in order")
    func orderWithinBatch() throws {
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        let name = domain("com.example.Order")
        try store.commitAndWait([
            .set(name, key: "k", value: .integer(1)),
            .removeDomain(name),
            .set(name, key: "k", value: .integer(2)),
            .set(name, key: "gone", value: .integer(3)),
            .remove(name, key: "gone"),
        ]).get()
        #expect(try store.loadAll() == [name: ["k": .integer(2)]])
    }

    @Test("200 concurrent commits share transactions, complete in order, each after its data is durable")
    func groupCommit() throws {
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        let database = store.databaseURL
        let count = 200
        let issueLock = Mutex(0)
        let completed = Mutex<[Int]>([])
        let problems = Mutex<[String]>([])
        let group = DispatchGroup()
        for _ in 0..<count { group.enter() }
        DispatchQueue.concurrentPerform(iterations: count) { index in
            let name = domain("com.example.App\(index % 7)")
            let key = "key\(index)"
            // The lock makes the order of the calls known: sequence numbers follow it.
            issueLock.withLock { next in
                let sequence = next
                next += 1
                store.commit([.set(name, key: key, value: .integer(Int64(sequence)))]) { result in
                    if case .failure(let error) = result {
                        problems.withLock { $0.append("commit \(sequence) failed: \(error)") }
                    }
                    do {
                        let stored = try readFromFreshConnection(database, domain: name.rawValue, key: key)
                        if stored != .integer(Int64(sequence)) {
                            problems.withLock { $0.append("commit \(sequence) not readable: \(String(describing: stored))") }
                        }
                    } catch {
                        problems.withLock { $0.append("commit \(sequence): \(error)") }
                    }
                    completed.withLock { $0.append(sequence) }
                    group.leave()
                }
            }
        }
        #expect(group.wait(timeout: .now() + 60) == .success)
        #expect(problems.withLock { $0 } == [])
        #expect(completed.withLock { $0 } == Array(0..<count))
        let statistics = store.statistics
        print("group commit: \(count) batches in \(statistics.transactions) transactions")
        #expect(statistics.batches == count)
        #expect(statistics.transactions < count)
        #expect(statistics.transactions >= 1)
        store.close()
        let reopened = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { reopened.close() }
        #expect(try reopened.loadAll().values.reduce(0) { $0 + $1.count } == count)
    }

    @Test("batches queued while a transaction is in flight go together into the next one")
    func nextTransaction() throws {
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        let name = domain("com.example.Next")
        let release = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        store.commit([.set(name, key: "first", value: .integer(0))]) { _ in
            held.signal()
            _ = release.wait(timeout: .now() + 60)
        }
        try #require(held.wait(timeout: .now() + 30) == .success, "the first commit never reached its completion")
        let order = Mutex<[Int]>([])
        let group = DispatchGroup()
        for index in 1...5 {
            group.enter()
            store.commit([.set(name, key: "k\(index)", value: .integer(Int64(index)))]) { result in
                if case .success = result { order.withLock { $0.append(index) } }
                group.leave()
            }
        }
        release.signal()
        #expect(group.wait(timeout: .now() + 30) == .success)
        #expect(order.withLock { $0 } == [1, 2, 3, 4, 5])
        #expect(store.statistics == (transactions: 2, batches: 6))
        #expect(try store.loadAll()[name]?.count == 6)
    }

    @Test("an empty commit completes after everything queued before it")
    func emptyCommit() throws {
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        let order = Mutex<[String]>([])
        let name = domain("com.example.Empty")
        store.commit([.set(name, key: "k", value: .boolean(true))]) { _ in order.withLock { $0.append("write") } }
        #expect(throws: Never.self) { try store.commitAndWait([]).get() }
        order.withLock { $0.append("barrier") }
        #expect(order.withLock { $0 } == ["write", "barrier"])
        #expect(try readFromFreshConnection(store.databaseURL, domain: name.rawValue, key: "k") == .boolean(true))
    }

    @Test(
        "on a full database each batch of a failed transaction is tried alone: what fits is stored, the rest refused, earlier data kept, and the store recovers"
    )
    func failingTransaction() throws {
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        let name = domain("com.example.Full")
        try store.commitAndWait([.set(name, key: "kept", value: .string("before"))]).get()
        let before = store.statistics

        // Cap the file where it is now: the next transaction that needs a page fails as on a
        // full disk.
        try store.setMaximumPageCount(try store.pageCount())
        // Hold the writer in a completion so that both batches below join one transaction.
        let release = DispatchSemaphore(value: 0)
        let held = DispatchSemaphore(value: 0)
        store.commit([]) { _ in
            held.signal()
            _ = release.wait(timeout: .now() + 60)
        }
        try #require(held.wait(timeout: .now() + 30) == .success, "the first commit never reached its completion")
        let results = Mutex<[Result<Void, StoreError>]>([])
        let group = DispatchGroup()
        group.enter()
        group.enter()
        store.commit([.set(name, key: "small", value: .integer(1))]) { result in
            results.withLock { $0.append(result) }
            group.leave()
        }
        store.commit([.set(name, key: "big", value: .data(Data(repeating: 0xab, count: 256 * 1024)))]) { result in
            results.withLock { $0.append(result) }
            group.leave()
        }
        release.signal()
        #expect(group.wait(timeout: .now() + 30) == .success)
        // The transaction of both fails; each batch is then tried alone (completions come
        // in commit order): the small value fits in the page it shares, the big one does not.
        let outcomes = results.withLock { $0 }
        #expect(outcomes.count == 2)
        if case .failure(let error)? = outcomes.first { Issue.record("the small batch was refused with the big one: \(error)") }
        if case .failure(.writeFailed(let reason))? = outcomes.last {
            #expect(reason.contains("disk is full"))
            #expect(reason.contains(temporary.store.path))
        } else {
            Issue.record("expected writeFailed for the big batch, got \(String(describing: outcomes.last))")
        }
        #expect(store.statistics.transactions == before.transactions + 2)  // the barrier and the small batch
        #expect(try store.loadAll() == [name: ["kept": .string("before"), "small": .integer(1)]])

        // Once there is room again, commits work.
        try store.setMaximumPageCount(nil)
        try store.commitAndWait([.set(name, key: "after", value: .string("room again"))]).get()
        #expect(try store.loadAll() == [name: ["kept": .string("before"), "small": .integer(1), "after": .string("room again")]])
    }

    @Test("after close, commits complete with .closed and loads throw")
    func closed() throws {
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        let name = domain("com.example.Closed")
        let done = Mutex(false)
        store.commit([.set(name, key: "k", value: .integer(1))]) { result in
            done.withLock { $0 = (try? result.get()) != nil }
        }
        store.close()
        #expect(done.withLock { $0 }, "close waits for queued batches")
        store.close()
        guard case .failure(.closed) = store.commitAndWait([.remove(name, key: "k")]) else {
            Issue.record("a commit after close must fail with .closed")
            return
        }
        #expect(throws: StoreError.self) { try store.loadAll() }
        #expect(FileManager.default.fileExists(atPath: store.databaseURL.path + "-wal") == false)
    }

    @Test("close from inside a completion does not deadlock")
    func closeFromCompletion() throws {
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        let done = DispatchSemaphore(value: 0)
        store.commit([]) { _ in
            store.close()
            done.signal()
        }
        #expect(done.wait(timeout: .now() + 10) == .success)
        guard case .failure(.closed) = store.commitAndWait([]) else {
            Issue.record("a commit after close must fail with .closed")
            return
        }
    }
}
