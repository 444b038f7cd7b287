import Dispatch
import Foundation
import PreferencesModel
@_spi(Testing) import PreferencesStore
import Testing

#if canImport(Glibc)
    import Glibc
#endif

@Suite("Checkpoints after the answer")
struct CheckpointAfterAnswerTests {
    /// 700 one-key commits (two WAL frames each) take the WAL past the 1,000-frame threshold.
    /// The database file changes only when the WAL is checkpointed into it: no commit's
    /// completion may see it changed since that commit was queued (SQLite's automatic
    /// checkpoint ran inside the COMMIT, before the caller was answered), and it must change
    /// at some point (else the test proves nothing).
    @Test("no commit waits for a checkpoint; the checkpoint still runs")
    func checkpointRunsAfterTheCompletion() throws {
        let temporary = try TemporaryDirectory()
        let editor = domain("com.example.Editor")
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { store.close() }
        let database = store.databaseURL.path
        var changedWhileCommitting: [Int] = []
        var checkpointed = false
        for index in 0..<700 {
            let before = Self.stamp(database)
            let answered = DispatchSemaphore(value: 0)
            nonisolated(unsafe) var atCompletion = before
            store.commit([.set(editor, key: "counter", value: .integer(Int64(index)))]) { result in
                atCompletion = Self.stamp(database)
                if case .failure(let error) = result { Issue.record("commit \(index) failed: \(error)") }
                answered.signal()
            }
            #expect(answered.wait(timeout: .now() + 30) == .success)
            if atCompletion != before { changedWhileCommitting.append(index) }
            // An empty batch completes once everything before it, the checkpoint included, is done.
            let drained = DispatchSemaphore(value: 0)
            store.commit([]) { _ in drained.signal() }
            #expect(drained.wait(timeout: .now() + 30) == .success)
            if Self.stamp(database) != atCompletion { checkpointed = true }
        }
        #expect(changedWhileCommitting.isEmpty, "commits answered after the database file changed: \(changedWhileCommitting)")
        #expect(checkpointed, "700 commits never checkpointed the WAL into the database")
    }

    /// The database file's modification time (ns) and size.
    private static func stamp(_ path: String) -> [Int] {
        var info = stat()
        guard stat(path, &info) == 0 else { return [-1] }
        return [info.st_mtim.tv_sec, info.st_mtim.tv_nsec, Int(info.st_size)]
    }
}
