import Dispatch
import Foundation
import PreferencesModel
@_spi(Testing) import PreferencesStore
import Synchronization
import Testing

@Suite("Closing while others commit")
struct CloseWhileCommittingTests {
    /// Four threads commit while another closes the store: every batch is answered once,
    /// a batch answered `.success` is on disk, and the others were refused as `.closed`
    /// (never half-done or lost because the writer closed under them).
    @Test("every batch accepted before close() is durable; later ones are refused as closed")
    func closeRacesCommits() throws {
        for round in 0..<5 {
            let temporary = try TemporaryDirectory()
            let editor = domain("com.example.Editor")
            let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
            let outcomes = Mutex<[String: Result<Void, StoreError>]>([:])
            let answered = DispatchGroup()
            let started = DispatchSemaphore(value: 0)
            for thread in 0..<4 {
                Thread.detachNewThread {
                    started.signal()
                    for index in 0..<50 {
                        let key = "t\(thread)-\(index)"
                        answered.enter()
                        store.commit([.set(editor, key: key, value: .integer(Int64(index)))]) { result in
                            outcomes.withLock { $0[key] = result }
                            answered.leave()
                        }
                    }
                }
            }
            for _ in 0..<4 { started.wait() }
            store.close()
            #expect(answered.wait(timeout: .now() + 30) == .success, "round \(round): some batches were never answered")
            let results = outcomes.withLock { $0 }
            #expect(results.count == 200)
            let durable = Set(results.filter { if case .success = $0.value { true } else { false } }.keys)
            for case (let key, .failure(let error)) in results {
                if case .closed = error { continue }
                Issue.record("round \(round): \(key) failed with \(error), not as closed")
            }
            let reopened = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
            defer { reopened.close() }
            let stored = Set(try reopened.loadAll()[editor]?.keys.map { $0 } ?? [])
            #expect(durable.isSubset(of: stored), "round \(round): acknowledged but not stored: \(durable.subtracting(stored).sorted())")
        }
    }
}
