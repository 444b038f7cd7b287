import Dispatch
import Foundation
import GRDB
import Logging
import PreferencesModel
import Synchronization

/// The durable store of persistent preference domains: one SQLite database, written by
/// group commit.
///
/// Every change is also recorded in a journal (the `history` table): see
/// `Journal.swift`.
///
/// Every key of every domain is one row of `preference(domain, key, value)`, its value in
/// the ``PropertyListValue`` binary encoding, so a write costs the same however large the
/// store is. Writes go through ``commit(_:completion:)``: a serial writer of the store's own
/// folds every batch queued so far into one transaction, and reports each batch once its
/// COMMIT is durable (WAL journal, `synchronous=FULL`).
public final class DomainStore: Sendable {
    let files: StoreFiles
    let logger: Logger
    let database: DatabaseQueue
    let writerQueue: DispatchQueue
    let writer: Mutex<WriterState>
    let counters: Mutex<(transactions: Int, batches: Int)>
    /// The ballast that keeps room on the disk for removals.
    let reserve: DiskReserve
    /// How large the change journal may grow.
    public let historyBounds: HistoryBounds
    /// The journal's entries and bytes, changed by the writer after each commit.
    let journalTotals: Mutex<JournalTotals>
    /// Why the journal's newest change could not be read as the store opened (its pages
    /// damaged), or `nil`: the writer's first job then starts the journal afresh
    /// (`JournalCheck.swift`).
    let journalUnreadable: String?
    /// Where `History` reads run, on a read-only connection of their own (`HistoryReader.swift`).
    let readerQueue: DispatchQueue
    let historyReader: Mutex<HistoryReaderState>
    /// The keys ``loadAll()`` left out, as stored, per domain (see there).
    let leftOutRows: Mutex<[DomainName: [String]]>
    /// Keys a settings bundle marks `IsSecure`, per domain: journalled without values.
    let secureKeys: Mutex<[DomainName: Set<String>]>
    /// Whether the WAL was made full-size (`WALPreallocation.swift`), after the first commit.
    let walPreallocated: Mutex<Bool>
    /// The WAL's frames after the latest commit, recorded by the WAL hook (see
    /// `Checkpoints.swift`).
    let walFrameCount: WALFrames

    /// Where a damaged store found at start-up was moved aside, or `nil` when the store
    /// opened cleanly.
    public let recoveredFrom: URL?

    /// The database file: `<directory>/store.sqlite`.
    public var databaseURL: URL { files.database }

    /// Opens (creating if needed) `<directory>/store.sqlite`.
    ///
    /// The directory is created with mode 0700 (and tightened to 0700 if it exists with
    /// looser bits); the database files are 0600. The database runs in WAL mode with
    /// `synchronous=FULL`, and is migrated forward to this version's schema.
    ///
    /// A file that is not a database, is damaged, or fails `PRAGMA quick_check` is moved
    /// aside (with its -wal and -shm) to `store.sqlite.corrupt-<UTC yyyyMMdd'T'HHmmss'Z'>`,
    /// never deleted; the move is logged with both paths, a fresh store is started, and
    /// ``recoveredFrom`` says where the damaged copy went. The change journal's tables are
    /// checked after the store opens, before its first commit: when only they are damaged,
    /// the preferences are kept, a copy of the store goes aside under the same name, and
    /// the journal starts afresh (logged).
    ///
    /// A ballast file of `reserveBytes` (`store.reserve`, see ``reserveFileName``) is kept
    /// beside the database so that removals go through on a full disk.
    ///
    /// Every change is recorded in a journal in the same database, kept within
    /// `historyBounds` (oldest changes dropped first).
    ///
    /// - Throws: ``StoreError/newerSchema(path:)`` for a database written by a newer prefsd
    ///   (left untouched), ``StoreError/cannotOpen(path:reason:)`` when the store cannot be
    ///   opened or created.
    public init(
        directory: URL, logger: Logger, reserveBytes: Int = 1 << 20,
        historyBounds: HistoryBounds = .defaults
    ) throws(StoreError) {
        let files = StoreFiles(directory: directory)
        self.files = files
        self.logger = logger
        let opened = try StoreOpener(files: files, logger: logger).open()
        database = opened.database
        recoveredFrom = opened.recoveredFrom
        self.historyBounds = historyBounds
        do {
            journalTotals = Mutex(try Self.loadJournalIssued(opened.database))
            journalUnreadable = nil
        } catch {
            guard StoreError.isCorruption(error) else {
                throw .cannotOpen(
                    path: files.databasePath,
                    reason: "its change journal cannot be read: \(StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))")
            }
            journalTotals = Mutex(JournalTotals(issued: Self.sequenceBound(opened.database)))
            journalUnreadable = Self.damage(error)
        }
        reserve = DiskReserve(directory: directory, size: reserveBytes)
        if reserve.state != .held {
            logger.warning(
                "no room for the \(reserveBytes)-byte reserve that keeps removals possible on a full disk; it is made once there is room",
                metadata: ["store": "\(files.directoryPath)"])
        }
        let frames = WALFrames()
        walFrameCount = frames
        do {
            try Self.installWALHook(opened.database, frames: frames)
        } catch {
            throw .cannotOpen(
                path: files.databasePath,
                reason: "its WAL hook cannot be set: \(StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))")
        }
        writerQueue = DispatchQueue(label: "prefsd.store.writer", qos: .userInitiated)
        writer = Mutex(WriterState())
        leftOutRows = Mutex([:])
        readerQueue = DispatchQueue(label: "prefsd.store.history-reader", qos: .userInitiated)
        historyReader = Mutex(HistoryReaderState())
        secureKeys = Mutex([:])
        counters = Mutex((transactions: 0, batches: 0))
        walPreallocated = Mutex(false)
        writerQueue.async { [self] in checkJournal() }
    }

    /// Sets the keys whose changes the journal records without their values (those a
    /// settings bundle marks `IsSecure`), per domain; changes committed from now on.
    public func setSecureKeys(_ keys: [DomainName: Set<String>]) {
        secureKeys.withLock { $0 = keys }
    }

    /// The name of the ballast file in the store directory.
    public static let reserveFileName = DiskReserve.fileName

    /// Counters for tests and benchmarks: transactions committed, and batches committed in them.
    public var statistics: (transactions: Int, batches: Int) {
        counters.withLock { $0 }
    }
}
