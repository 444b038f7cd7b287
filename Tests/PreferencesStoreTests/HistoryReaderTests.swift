import Dispatch
import PreferencesModel
@_spi(Testing) import PreferencesStore
import Synchronization
import Testing

/// `History` reads run on a reader of their own: a long one holds up no commit.
@Suite("History reader")
struct HistoryReaderTests {
    @Test("a history read in progress holds up no commit; it answers with the changes queued before it")
    func readDoesNotHoldCommits() throws {
        let domain = try DomainName("com.example.Reader")
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        try store.commitAndWait([.set(domain, key: "k", value: .integer(1))]).get()

        let release = store.holdHistoryReader()
        let answered = DispatchSemaphore(value: 0)
        let answer = Mutex<Result<[HistoryEntry], StoreError>?>(nil)
        store.readHistory(domain: domain, key: nil, after: 0, limit: 100, maxBytes: 1 << 20) { result in
            answer.withLock { $0 = result }
            answered.signal()
        }
        // The read is held (as a long one would be); commits go on meanwhile.
        try store.commitAndWait([.set(domain, key: "k", value: .integer(2))]).get()
        try store.commitAndWait([.set(domain, key: "k", value: .integer(3))]).get()
        #expect(answer.withLock { $0 } == nil, "the read is still held")
        release()
        #expect(answered.wait(timeout: .now() + 30) == .success, "the read answers once released")
        let entries = try #require(answer.withLock { $0 }).get()
        #expect(entries.first?.value == .integer(1), "the change queued before the read is in its answer")
        #expect(entries.count >= 1 && entries.count <= 3)
    }

    @Test("a read after close fails with closed, at once")
    func readAfterClose() throws {
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        store.close()
        let answered = DispatchSemaphore(value: 0)
        let failed = Mutex(false)
        store.readHistory(domain: nil, key: nil, after: 0, limit: 1, maxBytes: 1 << 20) { result in
            if case .failure(.closed) = result { failed.withLock { $0 = true } }
            answered.signal()
        }
        #expect(answered.wait(timeout: .now() + 30) == .success)
        #expect(failed.withLock { $0 })
    }
}
