import Foundation
import GRDB
import Logging
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

extension DomainStore {
    /// What the journal's check found.
    enum JournalCheckOutcome {
        /// Sound; its entries and bytes counted.
        case counted(JournalTotals)
        /// Damaged, as `PRAGMA quick_check` or SQLite said.
        case damaged(reason: String)
        /// The check itself could not run.
        case failed(reason: String)
    }

    /// Runs on the writer queue, its first job: checks the journal's tables and counts
    /// their entries and bytes, and starts the journal afresh if it is damaged
    /// (``startJournalAfresh(damage:)``).
    ///
    /// The journal is most of a full store's pages, so it is checked here rather than as the
    /// store opens (`StoreOpener.swift` checks the rest): answers are not held up while it is
    /// read. The check reads on a connection of its own, so that reads of the main
    /// connection (a domain loaded for the first calls) go on meanwhile, and on a thread of
    /// its own below the threads that answer calls (on Linux, a nice value is the calling
    /// thread's alone). No commit runs meanwhile (commits run on this queue, which waits), so
    /// none can write into a damaged journal, and the count is exact. Should the check
    /// fail, the next commit counts in its own transaction.
    func checkJournal() {
        let totals = journalTotals.withLock { $0 }
        guard !totals.counted else { return }
        if let journalUnreadable {
            startJournalAfresh(damage: journalUnreadable)
            return
        }
        let outcome = Mutex<JournalCheckOutcome>(.failed(reason: "the check did not run"))
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread { [self] in
            defer { done.signal() }
            setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
            let checked = checkJournal(totals)
            outcome.withLock { $0 = checked }
        }
        done.wait()
        switch outcome.withLock({ $0 }) {
        case .counted(let counted):
            journalTotals.withLock { $0 = counted }
        case .damaged(let reason):
            startJournalAfresh(damage: reason)
        case .failed(let reason):
            logger.error(
                "the change journal could not be checked; the next commit counts it",
                metadata: ["store": "\(files.databasePath)", "error": "\(reason)"])
        }
    }

    /// Checks and counts the journal on a read-only connection of its own, in one read.
    private func checkJournal(_ totals: JournalTotals) -> JournalCheckOutcome {
        do {
            let reader = try files.readOnlyConnection(label: "prefsd.store.journal-check", cacheKiB: 128)
            defer { try? reader.close() }
            return try reader.read { db in
                if let damage = try IntegrityCheck.damage(journal: true, in: db) { return .damaged(reason: damage) }
                return .counted(try Self.counted(totals, in: db))
            }
        } catch {
            guard StoreError.isCorruption(error) else {
                return .failed(reason: StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))
            }
            return .damaged(reason: Self.damage(error))
        }
    }

    /// SQLite's words for the damage it met.
    static func damage(_ error: any Error) -> String {
        "SQLite: " + ((error as? DatabaseError)?.message ?? "\(error)")
    }

    /// A sequence past any the journal can have issued, for a store whose journal's newest
    /// change cannot be read (``loadJournalIssued(_:)`` failed on a damaged page): the
    /// clock's microseconds since 1970, or the horizon's sequences if higher and readable.
    /// Each change takes one sequence, and a store takes fewer than one change per
    /// microsecond since it was made, so the clock is past them all (unless it was set back
    /// before the store was made).
    static func sequenceBound(_ database: DatabaseQueue) -> Int64 {
        let clock = Int64(Date().timeIntervalSince1970 * 1_000_000)
        let horizon = try? database.read { db in
            try Int64.fetchOne(db, sql: "SELECT max(dropped, issued) FROM history_horizon WHERE id = 1")
        }
        return max(clock, (horizon ?? nil) ?? 0)
    }

    /// Starts a damaged journal afresh and keeps every preference: a copy of the store as
    /// it is goes aside (``StoreFiles/copyAside(now:)``), then a new database with this
    /// version's schema, the preferences and the GVariant types copied in and an empty
    /// journal whose horizon is the highest sequence issued (no sequence is given twice,
    /// and readers see that the changes before it are gone), replaces the store's content
    /// through SQLite's backup, in one transaction. Runs on the writer queue.
    func startJournalAfresh(damage: String) {
        let issued = journalTotals.withLock { $0.issued }
        do {
            let copy = try files.copyAside()
            // SQLite's backup into a WAL database needs the same page size on both sides.
            let pageSize = try database.read { db in try Int.fetchOne(db, sql: "PRAGMA page_size") } ?? 4096
            let fresh = try DatabaseQueue()
            try fresh.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA page_size = \(pageSize)") }
            try StoreSchema.migrator.migrate(fresh)
            try fresh.writeWithoutTransaction { db in
                try db.execute(sql: "ATTACH DATABASE ? AS kept", arguments: [files.databasePath])
                defer { try? db.execute(sql: "DETACH DATABASE kept") }
                try db.inTransaction {
                    try db.execute(
                        sql: """
                            INSERT INTO main.preference(domain, key, value) SELECT domain, key, value FROM kept.preference;
                            INSERT INTO main.gvariant_type(domain, key, type) SELECT domain, key, type FROM kept.gvariant_type;
                            UPDATE main.history_horizon SET dropped = ?, issued = ? WHERE id = 1;
                            """,
                        arguments: [issued, issued])
                    return .commit
                }
            }
            try fresh.backup(to: database)
            try fresh.close()
            journalTotals.withLock { $0 = JournalTotals(counted: true, issued: issued) }
            logger.error(
                "The change journal of the preferences store \(files.databasePath) is damaged (\(damage)); the preferences were kept and the journal starts afresh (`prefs history` shows changes from now on); a copy of the store as it was is at \(copy.path)",
                metadata: ["store": "\(files.databasePath)", "damagedCopy": "\(copy.path)", "reason": "\(damage)"])
        } catch {
            logger.error(
                "The change journal of the preferences store \(files.databasePath) is damaged (\(damage)) and could not be started afresh: \(error); writes may fail until it is, which prefsd tries again when it next starts",
                metadata: ["store": "\(files.databasePath)", "reason": "\(damage)"])
        }
    }
}
