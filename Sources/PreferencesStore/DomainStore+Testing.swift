import GRDB

extension DomainStore {
    /// Test hook: caps the database at `pages` pages (SQLite's `max_page_count`) so that a
    /// test can make transactions fail as on a full disk; `nil` lifts the cap. Runs on the
    /// writer queue, between transactions.
    @_spi(Testing) public func setMaximumPageCount(_ pages: Int?) throws {
        let limit = pages ?? 1_073_741_823
        try writerQueue.sync {
            _ = try database.writeWithoutTransaction { db in
                try Int.fetchOne(db, sql: "PRAGMA max_page_count = \(limit)")
            }
        }
    }

    /// Test hook: the number of pages the database holds now.
    @_spi(Testing) public func pageCount() throws -> Int {
        try writerQueue.sync {
            try database.read { db in try Int.fetchOne(db, sql: "PRAGMA page_count") ?? 0 }
        }
    }
}

extension DomainStore {
    /// Test hook: holds the history reader's queue (as a long read would) until the
    /// returned function is called.
    @_spi(Testing) public func holdHistoryReader() -> @Sendable () -> Void {
        let queue = readerQueue
        queue.suspend()
        return { queue.resume() }
    }
}

extension DomainStore {
    /// Test hook: checkpoints the WAL and truncates it, so that the next commit's frames
    /// are the only ones in it (see ``walFrames()``).
    @_spi(Testing) public func restartWAL() throws {
        try writerQueue.sync {
            try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)") }
        }
    }

    /// Test hook: the number of page frames in the WAL (SQLite's `wal_checkpoint` log count).
    @_spi(Testing) public func walFrames() throws -> Int {
        try writerQueue.sync {
            try database.writeWithoutTransaction { db in
                try Row.fetchOne(db, sql: "PRAGMA wal_checkpoint(PASSIVE)")?[1] ?? -1
            }
        }
    }
}

extension DomainStore {
    /// Test hook: `hook` runs in every later ``commit(_:who:completion:)`` that schedules the
    /// writer, after the commit has queued its batch and let go of the writer's lock and
    /// before it schedules the writer (`nil` removes it).
    @_spi(Testing) public func setBeforeScheduling(_ hook: (@Sendable () -> Void)?) {
        writer.withLock { $0.beforeScheduling = hook }
    }
}
