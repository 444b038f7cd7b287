import Dispatch
import Foundation
import GRDB
import PreferencesModel

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// One call of ``DomainStore/commit(_:completion:)``, waiting for the writer.
struct PendingBatch: Sendable {
    let mutations: [StoreMutation]
    /// Who made the change, as the journal records it.
    let who: String
    /// Told the journal's sequence numbers of the batch's changes, once they are committed.
    var recorded: (@Sendable ([UInt64]) -> Void)? = nil
    let completion: @Sendable (Result<Void, StoreError>) -> Void

    /// Whether the batch only removes (so it can only free room in the store).
    var onlyRemoves: Bool {
        !mutations.contains { if case .set = $0 { true } else { false } }
    }
}

/// What the writer and the callers of ``DomainStore/commit(_:completion:)`` share, under a
/// mutex held only to queue or take batches, never across I/O.
struct WriterState: Sendable {
    /// Batches queued and not yet taken by the writer, in the order of the calls.
    var pending: [PendingBatch] = []
    /// Whether a drain is scheduled or running on the writer queue.
    var draining = false
    /// The thread running the drain, to spot a `close()` called from a completion.
    var drainingThread: UInt?
    /// Whether ``DomainStore/close()`` was called: later commits fail with `.closed`.
    var closed = false
    /// Whether the database connection itself has been closed.
    var databaseClosed = false
    /// Called (for tests) by a commit that schedules the writer, between letting go of the
    /// lock and scheduling: the window a concurrent ``DomainStore/close()`` must cover.
    var beforeScheduling: (@Sendable () -> Void)?
}

/// An identifier of the calling thread.
func currentThreadID() -> UInt {
    #if canImport(Darwin)
        UInt(bitPattern: pthread_self())
    #else
        UInt(pthread_self())
    #endif
}

extension DomainStore {
    /// Queues `mutations` as one atomic batch and returns at once.
    ///
    /// The store's writer takes every batch queued so far and commits them in one
    /// transaction, applying each batch's mutations in order; batches that arrive while a
    /// transaction is in flight go into the next one. Once COMMIT has returned (the data is
    /// durable), each batch's `completion` is called, in the order `commit` was called, on
    /// the store's writer queue: keep it short, and never wait in it for another commit.
    ///
    /// If the transaction fails, every batch in it gets `.failure(.writeFailed(...))` and
    /// nothing of them is stored; later commits work again once the cause is gone. On a
    /// full disk the WAL is checkpointed and truncated and each batch is tried again
    /// alone: batches that only remove with the room of the store's reserve, batches that
    /// add data when the room they need (free pages left by removals count) leaves the
    /// reserve's room free (see ``reserveFileName`` and `FullDisk.swift`). An empty
    /// `mutations` completes after everything queued before it is durable. After ``close()``
    /// the completion gets `.failure(.closed)` at once, on the calling thread.
    ///
    /// Every key set and every value set or noted must obey the store's rules
    /// (``StoreMutation/problem``); a batch with one that does not is refused whole with
    /// `.failure(.refused(...))`, at once, on the calling thread, whatever its source.
    ///
    /// Each batch that changes something is recorded in the journal, in the same
    /// transaction, as one change made by `who` per domain it changes (see `Journal.swift`);
    /// the journal's oldest changes are dropped to keep it within the store's ``HistoryBounds``.
    /// `recorded`, when given, is told the sequence numbers of those changes (none when the
    /// batch changed nothing or the journal was not kept), on the writer's queue, once they
    /// are committed and before `completion`.
    public func commit(
        _ mutations: [StoreMutation], who: String = "unknown", recorded: (@Sendable ([UInt64]) -> Void)? = nil,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        for mutation in mutations {
            if let problem = mutation.problem { return completion(.failure(.refused(reason: problem))) }
        }
        let batch = PendingBatch(mutations: mutations, who: who, recorded: recorded, completion: completion)
        enum Admission {
            case refused, queued
            case schedule((@Sendable () -> Void)?)
        }
        let admission = writer.withLock { state -> Admission in
            if state.closed { return .refused }
            state.pending.append(batch)
            if state.draining { return .queued }
            state.draining = true
            return .schedule(state.beforeScheduling)
        }
        switch admission {
        case .refused: completion(.failure(.closed))
        case .queued: break
        // Scheduled after the lock is let go: waking the writer inside it made the writer
        // find the lock still held, spin and sleep again. A `close()` that reaches the writer
        // queue first commits this batch itself (it drains before closing).
        case .schedule(let beforeScheduling):
            beforeScheduling?()
            writerQueue.async { self.drain() }
        }
    }

    /// Waits until every queued batch has completed, then closes the database (after a WAL
    /// checkpoint). Later commits complete with ``StoreError/closed``. Calling it again does
    /// nothing; called from a completion, it returns at once and the writer closes the
    /// database when the batches queued before it are done.
    public func close() {
        let fromWriter = writer.withLock { state -> Bool in
            state.closed = true
            return state.drainingThread == currentThreadID()
        }
        if fromWriter { return }
        // Drains first: a batch accepted before `closed` was set may not have its drain
        // queued yet (``commit(_:who:completion:)`` queues it after letting go of the lock).
        writerQueue.sync { drain() }
    }

    /// Runs on the writer queue: commits everything pending, round after round, until
    /// nothing is left.
    func drain() {
        writer.withLock { $0.drainingThread = currentThreadID() }
        while true {
            let batches = writer.withLock { state -> [PendingBatch] in
                if state.pending.isEmpty {
                    state.draining = false
                    state.drainingThread = nil
                    return []
                }
                defer { state.pending.removeAll(keepingCapacity: true) }
                return state.pending
            }
            if batches.isEmpty { break }
            let (results, committed) = writeKeepingReserve(batches)
            for (batch, result) in zip(batches, results) { batch.completion(result) }
            // After the completions, which answer the callers: the free-room check (a
            // statvfs), the checkpoint when due and, once, making the WAL full-size are off
            // the reply path.
            if committed {
                afterCommit()
                checkpointIfDue()
                preallocateWALOnce()
            }
        }
        if writer.withLock({ $0.closed }) { closeDatabase() }
    }

    /// Commits `batches`; on a full disk (or while the reserve is released) hands them to
    /// ``writeOnFullDisk(_:)`` one at a time. Returns each batch's outcome, and whether they
    /// were committed together, in which case the caller runs ``afterCommit()`` once their
    /// completions have run.
    private func writeKeepingReserve(_ batches: [PendingBatch]) -> (results: [Result<Void, StoreError>], committed: Bool) {
        if reserve.state != .released {
            let (result, diskFull) = write(batches)
            if case .success = result { return (batches.map { _ in result }, true) }
            guard diskFull else { return (batches.map { _ in result }, false) }
        }
        // The WAL may hold room a checkpoint gives back (and a failed attempt's frames).
        checkpoint()
        return (batches.map(writeOnFullDisk), false)
    }

    /// Commits `batches` in one transaction; says whether a failure was a full disk. With
    /// `yieldingJournal` (on a full disk) the journal is emptied first in the same
    /// transaction and the batches are not recorded (see ``yieldJournal()``). With
    /// `sparingFreedPages`, the pages the transaction frees are not overwritten with zeros
    /// (see ``writeOnFullDisk(_:)``).
    func write(
        _ batches: [PendingBatch], yieldingJournal: Bool = false, sparingFreedPages: Bool = false
    ) -> (result: Result<Void, StoreError>, diskFull: Bool) {
        // Only the writer queue runs this, so the totals change under no other hand.
        var totals = journalTotals.withLock { $0 }
        let secure = secureKeys.withLock { $0 }
        // Bounds of 0 keep no history at all.
        let recording = !yieldingJournal && historyBounds.entries > 0 && historyBounds.bytes > 0
        // The batches that want their sequence numbers, told once the transaction commits.
        var told: [(recorded: @Sendable ([UInt64]) -> Void, sequences: [UInt64])] = []
        do {
            // BEGIN and COMMIT are prepared once and kept, like the statements between
            // them (GRDB's `inTransaction` parses both anew for every transaction).
            try database.writeWithoutTransaction { db in
                let zeroing = sparingFreedPages ? try Int.fetchOne(db, sql: "PRAGMA secure_delete") : nil
                if zeroing != nil { try db.execute(sql: "PRAGMA secure_delete = FAST") }
                defer { if let zeroing { try? db.execute(sql: "PRAGMA secure_delete = \(zeroing)") } }
                try db.cachedStatement(sql: StoreSchema.begin).execute()
                do {
                    // Counted at open on the writer queue; here only when that count failed.
                    if !totals.counted { totals = try Self.counted(totals, in: db) }
                    let upsert = try db.cachedStatement(sql: StoreSchema.upsert)
                    let delete = try db.cachedStatement(sql: StoreSchema.delete)
                    let deleteDomain = try db.cachedStatement(sql: StoreSchema.deleteDomain)
                    let time = Int64(Date().timeIntervalSince1970 * 1_000_000)
                    if yieldingJournal {
                        // First, so the batch can use the pages the journal frees.
                        totals = try trimJournal(totals, to: HistoryBounds(entries: 0, bytes: 0), in: db)
                    }
                    for batch in batches {
                        let (added, sequences) = try journal(
                            batch, in: db, time: time, issued: totals.issued, recording: recording, secure: secure
                        ) { mutation, encoded in
                            switch mutation {
                            case .set(let domain, let key, let value):
                                try upsert.run([.text(domain.rawValue), .text(key), .blob(encoded ?? value.encoded())])
                            case .remove(let domain, let key):
                                try delete.run([.text(domain.rawValue), .text(key)])
                            case .removeDomain(let domain):
                                try deleteDomain.run([.text(domain.rawValue)])
                            case .note:
                                break
                            case .setGVariantType(let domain, let key, let type?):
                                try db.cachedStatement(sql: StoreSchema.upsertType).execute(arguments: [domain.rawValue, key, type])
                            case .setGVariantType(let domain, let key, nil):
                                try db.cachedStatement(sql: StoreSchema.deleteType).execute(arguments: [domain.rawValue, key])
                            }
                        }
                        totals.entries += added.entries
                        totals.bytes += added.bytes
                        totals.issued = added.issued
                        if let recorded = batch.recorded { told.append((recorded, sequences)) }
                    }
                    totals = try trimJournal(totals, to: historyBounds, in: db)
                    try db.cachedStatement(sql: StoreSchema.commit).execute()
                } catch {
                    // SQLite may have rolled back already (a full disk, an I/O error).
                    if db.isInsideTransaction { try? db.rollback() }
                    throw error
                }
            }
        } catch {
            let reason = StoreError.explain(error, path: files.databasePath, directory: files.directoryPath)
            logger.error(
                "A transaction of \(batches.count) batches was rolled back: \(reason)",
                metadata: ["store": "\(files.databasePath)"])
            return (.failure(.writeFailed(reason: reason)), StoreError.isDiskFull(error))
        }
        journalTotals.withLock { $0 = totals }
        for (recorded, sequences) in told { recorded(sequences) }
        counters.withLock {
            $0.transactions += 1
            $0.batches += batches.count
        }
        return (.success(()), false)
    }

    /// Runs on the writer queue: checkpoints the WAL and closes the connection, once.
    func closeDatabase() {
        let alreadyClosed = writer.withLock { state -> Bool in
            defer { state.databaseClosed = true }
            return state.databaseClosed
        }
        if alreadyClosed { return }
        // After every completion has run, so the reads they queued come first.
        closeHistoryReader()
        do {
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
            try database.close()
        } catch {
            logger.warning(
                "Closing the preferences store \(files.databasePath) failed: \(StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))",
                metadata: ["store": "\(files.databasePath)"])
        }
    }
}
