import Foundation
import GRDB
import Logging

/// Opens the database of a store: checks it, recovers from a damaged file, migrates it.
struct StoreOpener {
    let files: StoreFiles
    let logger: Logger

    /// Why one attempt to open failed.
    enum Failure: Error {
        /// The file is damaged or not a database: move it aside and start afresh.
        case damaged(reason: String)
        /// Any other failure, reported to the caller as it is.
        case refused(StoreError)
    }

    /// Opens the store, moving a damaged database aside once.
    func open() throws(StoreError) -> (database: DatabaseQueue, recoveredFrom: URL?) {
        try files.prepareDirectory()
        let damage: String
        switch Result(catching: attempt) {
        case .success(let database):
            return (database, nil)
        case .failure(.refused(let error)):
            throw error
        case .failure(.damaged(let reason)):
            damage = reason
        }
        let movedTo = try files.moveAside()
        logger.error(
            "The preferences store \(files.databasePath) is damaged (\(damage)); it was moved aside to \(movedTo.path) and a fresh store was started",
            metadata: ["store": "\(files.databasePath)", "damagedCopy": "\(movedTo.path)", "reason": "\(damage)"])
        switch Result(catching: attempt) {
        case .success(let database):
            return (database, movedTo)
        case .failure(.refused(let error)):
            throw error
        case .failure(.damaged(let reason)):
            throw .cannotOpen(path: files.databasePath, reason: "a fresh store is damaged at once: \(reason)")
        }
    }

    /// One attempt: open, check, refuse a newer schema, switch to WAL, migrate.
    private func attempt() throws(Failure) -> DatabaseQueue {
        do {
            try files.createDatabaseFileIfNeeded()
        } catch {
            throw .refused(error)
        }
        var configuration = Configuration()
        configuration.label = "prefsd.store"
        configuration.busyMode = .timeout(10)
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
        }
        let database: DatabaseQueue
        do {
            database = try DatabaseQueue(path: files.databasePath, configuration: configuration)
        } catch {
            throw classify(error)
        }
        do {
            try check(database)
        } catch {
            try? database.close()
            throw error
        }
        do {
            try files.restrictFileModes()
        } catch {
            try? database.close()
            throw .refused(error)
        }
        return database
    }

    private func check(_ database: DatabaseQueue) throws(Failure) {
        let migrator = StoreSchema.migrator
        do {
            // The journal is checked once the store is open, before its first commit
            // (`JournalCheck.swift`).
            if let damage = try database.read({ db in try IntegrityCheck.damage(journal: false, in: db) }) {
                throw Failure.damaged(reason: damage)
            }
            let superseded = try database.read { db in try migrator.hasBeenSuperseded(db) }
            if superseded {
                throw Failure.refused(.newerSchema(path: files.databasePath))
            }
            let mode = try database.writeWithoutTransaction { db in
                try String.fetchOne(db, sql: "PRAGMA journal_mode = WAL")
            }
            guard mode?.lowercased() == "wal" else {
                throw Failure.refused(
                    .cannotOpen(
                        path: files.databasePath,
                        reason: "the file system does not support SQLite's WAL journal (journal mode is \(mode ?? "unknown"))"))
            }
            try migrator.migrate(database)
        } catch let failure as Failure {
            throw failure
        } catch {
            throw classify(error)
        }
    }

    private func classify(_ error: any Error) -> Failure {
        let explanation = StoreError.explain(error, path: files.databasePath, directory: files.directoryPath)
        if StoreError.isCorruption(error) { return .damaged(reason: explanation) }
        return .refused(.cannotOpen(path: files.databasePath, reason: explanation))
    }
}
