import Dispatch
import Foundation
import PreferencesModel
@_spi(Testing) import PreferencesStore
import Synchronization
import Testing

@Suite("Closing while others commit")
struct CloseWhileCommittingTests {
    /// A commit queues its batch under the writer's lock and schedules the writer after
    /// letting go of it; a `close()` in between must still commit the batch. The hook holds
    /// the commit in that window while `close()` runs, so the window is hit every time.
    @Test("a batch queued before close() but not yet handed to the writer is committed by close()")
    func closeInsideTheSchedulingWindow() throws {
        let temporary = try TemporaryDirectory()
        let editor = domain("com.example.Editor")
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        let inWindow = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        store.setBeforeScheduling {
            inWindow.signal()
            release.wait()
        }
        let outcome = Mutex<Result<Void, StoreError>?>(nil)
        let answered = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            store.commit([.set(editor, key: "queued", value: .integer(1))]) { result in
                outcome.withLock { $0 = result }
                answered.signal()
            }
        }
        try #require(inWindow.wait(timeout: .now() + 30) == .success, "the commit never reached the scheduling window")
        store.close()
        release.signal()
        #expect(answered.wait(timeout: .now() + 30) == .success, "the batch was never answered")
        let result = outcome.withLock { $0 }
        guard case .success = result else {
            Issue.record("the batch queued before close() was answered \(String(describing: result)), not stored")
            return
        }
        let reopened = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { reopened.close() }
        #expect(try reopened.loadAll()[editor]?["queued"] == .integer(1))
    }

    /// Four threads commit while another closes the store: every batch is answered once,
    /// a batch answered `.success` is on disk, and the others were refused as `.closed`
    /// (never half-done or lost because the writer closed under them). Where close() lands
    /// among the commits is left to the scheduler; the test above pins the narrow window.
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
