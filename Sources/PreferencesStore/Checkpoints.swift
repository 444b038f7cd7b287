import GRDB
import GRDBSQLite
import Synchronization

/// Checkpoints after the callers are answered.
///
/// SQLite's automatic checkpoint runs inside the `COMMIT` that takes the WAL to 1,000 frames
/// (`wal_autocheckpoint`): that commit's callers waited while up to 1,000 pages were copied
/// into the database and synced, one write in 250 of a single key. The store turns it off by
/// setting its own WAL hook (`sqlite3_wal_hook`, which replaces the automatic checkpoint's),
/// which records the WAL's frames after each commit; once the commit's callers are
/// answered, the writer checkpoints (`PASSIVE`, as the automatic one) when the WAL has
/// reached the same 1,000 frames. The WAL is rewound at that point, within its
/// preallocated size (see `WALPreallocation.swift`).
final class WALFrames: Sendable {
    /// Frames in the WAL after the latest commit, as SQLite reported them.
    let count = Mutex<Int32>(0)

    /// SQLite's `wal_autocheckpoint` default, kept as the threshold.
    static let checkpointThreshold: Int32 = 1_000
}

/// The WAL hook: records the frame count. Runs on the writer queue, inside a commit.
private let recordFrames: @convention(c) (UnsafeMutableRawPointer?, OpaquePointer?, UnsafePointer<CChar>?, Int32) -> Int32 = {
    context, _, _, frames in
    if let context { Unmanaged<WALFrames>.fromOpaque(context).takeUnretainedValue().count.withLock { $0 = frames } }
    return SQLITE_OK
}

extension DomainStore {
    /// Installs the WAL hook on the writer's connection (which turns SQLite's automatic
    /// checkpoint off). `frames` lives as long as the store, and so as its connection.
    static func installWALHook(_ database: DatabaseQueue, frames: WALFrames) throws {
        try database.writeWithoutTransaction { db in
            _ = sqlite3_wal_hook(db.sqliteConnection, recordFrames, Unmanaged.passUnretained(frames).toOpaque())
        }
    }

    /// Checkpoints when the latest commit left the WAL at the threshold or beyond. On the
    /// writer queue, after that commit's completions; a failure (a reader in the way, an I/O
    /// error) leaves the WAL as it is, and the next commit tries again, as SQLite would.
    func checkpointIfDue() {
        guard walFrameCount.count.withLock({ $0 }) >= WALFrames.checkpointThreshold else { return }
        do {
            try database.writeWithoutTransaction { db in try db.execute(sql: "PRAGMA wal_checkpoint(PASSIVE)") }
        } catch {
            logger.debug(
                "a checkpoint failed; the next commit tries again",
                metadata: [
                    "store": "\(files.directoryPath)", "reason": "\(StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))",
                ])
        }
    }
}
