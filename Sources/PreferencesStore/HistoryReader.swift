import Dispatch
import GRDB
import PreferencesModel

/// The journal's reader: `History` reads run on a queue and a read-only connection of
/// their own, so a long read neither holds up the writer's commits nor the caller's
/// thread (WAL lets a reader and the writer run at once).
struct HistoryReaderState: Sendable {
    /// The read-only connection, opened at the first read.
    var database: DatabaseQueue?
    /// Whether ``DomainStore/close()`` was called: later reads fail with `.closed`.
    var closed = false
}

extension DomainStore {
    /// Reads the journal as ``history(domain:key:after:limit:maxBytes:)`` does, once every
    /// change queued before this call is durable (so a caller's own earlier writes are in
    /// the answer), on the store's reader queue and read-only connection; `completion`
    /// runs there. Never blocks the calling thread, and never holds up a commit.
    public func readHistory(
        domain: DomainName?, key: String?, after: UInt64, limit: Int, maxBytes: Int, newest: Bool = false,
        completion: @escaping @Sendable (Result<[HistoryEntry], StoreError>) -> Void
    ) {
        onHistoryReader(completion) { [self] reader throws(StoreError) in
            try history(from: reader, domain: domain, key: key, after: after, limit: limit, maxBytes: maxBytes, newest: newest)
        }
    }

    /// Reads the newest entries of the whole journal as ``readHistory(domain:key:after:limit:maxBytes:newest:completion:)``
    /// does with `newest`, and tells whether the oldest change among them is cut: `limit` or
    /// `maxBytes` was reached inside it, and the journal holds more of its entries.
    public func readRecentHistory(
        limit: Int, maxBytes: Int, completion: @escaping @Sendable (Result<(entries: [HistoryEntry], oldestCut: Bool), StoreError>) -> Void
    ) {
        onHistoryReader(completion) { [self] reader throws(StoreError) in
            try recentHistory(from: reader, domain: nil, key: nil, limit: limit, maxBytes: maxBytes)
        }
    }

    /// Runs `read` with the reader's connection once every change queued before is durable,
    /// on the reader queue; `completion` runs there with its result.
    private func onHistoryReader<T: Sendable>(
        _ completion: @escaping @Sendable (Result<T, StoreError>) -> Void,
        read: @escaping @Sendable (DatabaseQueue) throws(StoreError) -> T
    ) {
        commit([]) { [self] result in
            if case .failure(let error) = result { return completion(.failure(error)) }
            readerQueue.async { [self] in
                completion(Result { () throws(StoreError) -> T in try read(try historyConnection()) })
            }
        }
    }

    /// Runs on the reader queue only: the read-only connection, opened if needed (outside
    /// the lock; no other thread opens it).
    private func historyConnection() throws(StoreError) -> DatabaseQueue {
        let state = historyReader.withLock { $0 }
        if state.closed { throw .closed }
        if let database = state.database { return database }
        let database: DatabaseQueue
        do {
            database = try files.readOnlyConnection(label: "prefsd.store.history")
        } catch {
            throw .readFailed(reason: StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))
        }
        historyReader.withLock { $0.database = database }
        return database
    }

    /// Closes the reader's connection once the reads queued before are done (on the
    /// reader queue, so it may be called from a read's completion); later reads fail
    /// with ``StoreError/closed``.
    func closeHistoryReader() {
        readerQueue.async { [self] in
            let database = historyReader.withLock { state -> DatabaseQueue? in
                state.closed = true
                defer { state.database = nil }
                return state.database
            }
            try? database?.close()
        }
    }
}
