import Foundation
import GRDB
import PreferencesModel

/// How the store's writer behaves when the disk is (nearly) full.
///
/// Two things keep a full disk recoverable:
///
/// - **The WAL stays small when room is short.** SQLite's WAL keeps its size after a
///   checkpoint, and a checkpoint needs room to copy the WAL's pages into the database.
///   A WAL left to grow on a nearly full disk takes the room its own checkpoint needs, and
///   nothing can be written again, not even after a restart. So once the file system has
///   less than ``DomainStore/lowSpaceBytes`` free, every commit is followed by
///   `wal_checkpoint(TRUNCATE)`, and a write that fails for lack of room is tried again
///   after one.
/// - **Room is counted where it is.** Removals free pages inside the database (SQLite's
///   free list), not on the file system. A write is let through while the reserve is
///   released when the pages it needs fit in the free list and the disk's free bytes
///   (plus the reserve's, when it is held and lent for the write's WAL frames), leaving the
///   reserve's room free once the WAL is truncated again. The reserve is made again only
///   once the file system has room for it and for a write besides.
/// - **History yields.** On a full disk, after a removal and before refusing a write for
///   lack of room, the change journal is emptied in a transaction of its own (the horizon
///   moves past it: older changes can no longer be reverted to), so the journal never
///   keeps room the preferences need.
extension DomainStore {
    /// Below this much free room on the store's file system, each commit is followed by a
    /// truncating checkpoint (16 MiB, or 8 reserves when larger): the WAL never holds more
    /// than the room its checkpoint needs.
    var lowSpaceBytes: Int { max(16 << 20, 8 * reserve.size) }

    /// After a successful commit: keeps the WAL small when room is short, and makes the
    /// reserve once there is room for it.
    func afterCommit() {
        if reserve.freeBytes() < lowSpaceBytes { checkpoint() }
        if reserve.state != .held, reserve.restoreIfRoom() {
            logger.info("the store's reserve is made again: the disk has room", metadata: ["store": "\(files.directoryPath)"])
        }
    }

    /// Copies the WAL into the database and truncates it to nothing, giving its room back
    /// to the file system; returns whether it did. Fails, harmlessly (the WAL stays as it
    /// was), when the database cannot grow by the pages the WAL holds.
    @discardableResult
    func checkpoint() -> Bool {
        do {
            try database.writeWithoutTransaction { db in
                try db.execute(sql: "PRAGMA wal_checkpoint(TRUNCATE)")
            }
            return true
        } catch {
            logger.debug(
                "a checkpoint on a full disk failed",
                metadata: [
                    "store": "\(files.directoryPath)",
                    "reason": "\(StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))",
                ])
            return false
        }
    }

    /// Commits one batch on a full disk (or while the reserve is released).
    ///
    /// A batch that only removes may use the reserve's room. SQLite overwrites the pages a
    /// removal frees with zeros (Debian builds it to), through the WAL, and the journal
    /// keeps a copy of each value removed, so a large removal can need more room than the
    /// reserve gives: it is then tried again leaving the freed pages as they are, and at
    /// last with the journal emptied first and the removal not recorded in it.
    ///
    /// One that adds data is tried when the disk still has room for it and for the
    /// reserve; when it fails for lack of room with the reserve held, the reserve is lent
    /// for its WAL frames if the database's free pages take its data, and made again after
    /// the checkpoint.
    func writeOnFullDisk(_ batch: PendingBatch) -> Result<Void, StoreError> {
        if batch.onlyRemoves {
            var (result, diskFull) = write([batch])
            if diskFull, reserve.release() {
                logger.warning(
                    "the disk is full: released the store's reserve so that removals go through",
                    metadata: ["store": "\(files.directoryPath)"])
                (result, diskFull) = write([batch])
            }
            if diskFull {
                checkpoint()
                (result, diskFull) = write([batch], sparingFreedPages: true)
            }
            if diskFull {
                checkpoint()
                (result, diskFull) = write([batch], yieldingJournal: true, sparingFreedPages: true)
                if case .success = result {
                    logger.warning(
                        "the disk is full: emptied the change history so that a removal goes through (it is not in the history)",
                        metadata: ["store": "\(files.directoryPath)"])
                }
            }
            checkpoint()
            // What the removal freed went into the journal: give the journal's room back.
            if case .success = result { yieldJournal() }
            return result
        }
        if reserve.state == .released, !hasRoom(for: batch, lendingReserve: false) {
            guard yieldJournal(), hasRoom(for: batch, lendingReserve: false) else { return .failure(diskFullRefusal) }
        }
        var (result, diskFull) = write([batch])
        if diskFull {
            checkpoint()
            if reserve.state == .held, hasRoom(for: batch, lendingReserve: true), reserve.release() {
                (result, diskFull) = write([batch])
            }
        }
        checkpoint()
        if reserve.state != .held { reserve.restoreIfRoom() }
        return diskFull ? .failure(diskFullRefusal) : result
    }

    /// Deletes the store's reserve, giving its room to a removal that needs room outside
    /// the store on the same disk (dconf's database file, written again without the keys
    /// removed); returns whether there was one to delete. It is made again after a later
    /// commit, once the disk has room for it. Waits for the store's writer: never call it
    /// from a commit's completion.
    public func releaseReserve() -> Bool {
        let released = writerQueue.sync { reserve.release() }
        if released {
            logger.warning(
                "the disk is full: released the store's reserve so that a removal can rewrite a file beside the store",
                metadata: ["store": "\(files.directoryPath)"])
        }
        return released
    }

    /// Empties the change journal in a transaction of its own, then checkpoints, so that
    /// the room it held goes to the preferences. Returns whether the journal held anything
    /// and is now empty (it stays as it was when even this cannot be written).
    @discardableResult
    func yieldJournal() -> Bool {
        guard journalTotals.withLock({ $0.entries > 0 || !$0.counted }) else { return false }
        let (result, _) = write([], yieldingJournal: true)
        checkpoint()
        guard case .success = result else { return false }
        logger.warning(
            "the disk is full: emptied the change history to give its room to preferences",
            metadata: ["store": "\(files.directoryPath)"])
        return true
    }

    /// Why a write that adds data is refused on a full disk.
    private var diskFullRefusal: StoreError {
        .writeFailed(reason: "the disk is full: free space on \(files.directoryPath) (prefsd keeps \(reserve.size) bytes there for removals, which still work)")
    }

    /// Whether `batch` fits: its WAL frames and the pages its data takes beyond the
    /// database's free list fit in the free room (plus the reserve's, when lent), and the
    /// reserve's room is left once the WAL is truncated.
    private func hasRoom(for batch: PendingBatch, lendingReserve: Bool) -> Bool {
        guard
            let (pageSize, freePages) = try? database.read({ db in
                (try Int.fetchOne(db, sql: "PRAGMA page_size") ?? 4096, try Int.fetchOne(db, sql: "PRAGMA freelist_count") ?? 0)
            })
        else { return false }
        let usable = max(pageSize - 4, 512)
        var dataPages = 0, walPages = 4
        for mutation in batch.mutations {
            switch mutation {
            case .set(let domain, let key, let value):
                // The row, and the journal's copy of the new value (the previous value
                // moves from the row into the journal: counted as the row it leaves).
                let payload = 2 * (domain.rawValue.utf8.count + key.utf8.count + value.encoded().count + 16)
                let pages = (payload + usable - 1) / usable + 1
                dataPages += pages
                walPages += pages + 2
            case .remove, .removeDomain, .note, .setGVariantType:
                walPages += 3
            }
        }
        let available = reserve.freeBytes() + (lendingReserve ? reserve.size : 0)
        let growth = max(0, dataPages - freePages) * pageSize
        let walBytes = 32 + walPages * (pageSize + 24)
        return available >= walBytes + growth && available - growth >= reserve.size
    }
}
