import Foundation
import GRDB
import GRDBSQLite
import PreferencesModel

extension DomainStore {
    /// Every stored domain and its keys, read in one pass at start-up.
    ///
    /// A row whose domain name is invalid or whose value cannot be decoded (a damaged or
    /// foreign store) is left out and logged as an error; the row itself stays on disk.
    /// - Throws: ``StoreError/readFailed(reason:)`` when SQLite cannot read the database,
    ///   ``StoreError/closed`` after ``close()``.
    public func loadAll() throws(StoreError) -> [DomainName: [String: PropertyListValue]] {
        if writer.withLock({ $0.closed }) { throw .closed }
        var skipped: [String] = []
        var skippedCount = 0
        let result: [DomainName: [String: PropertyListValue]]
        do {
            result = try database.read { db in
                let statement = try db.makeStatement(sql: StoreSchema.selectAll)
                let raw = statement.sqliteStatement
                var domains: [DomainName: [String: PropertyListValue]] = [:]
                var currentName: String?
                var currentDomain: DomainName?
                var keys: [String: PropertyListValue] = [:]

                func finishDomain() {
                    if let currentDomain, !keys.isEmpty { domains[currentDomain] = keys }
                    keys = [:]
                }

                while true {
                    let code = sqlite3_step(raw)
                    if code == SQLITE_DONE { break }
                    guard code == SQLITE_ROW else {
                        throw DatabaseError(
                            resultCode: ResultCode(rawValue: code),
                            message: String(cString: sqlite3_errmsg(db.sqliteConnection)),
                            sql: StoreSchema.selectAll)
                    }
                    let name = Self.text(raw, column: 0)
                    if name != currentName {
                        finishDomain()
                        currentName = name
                        currentDomain = try? DomainName(name)
                    }
                    let key = Self.text(raw, column: 1)
                    guard let currentDomain else {
                        skippedCount += 1
                        if skipped.count < 10 { skipped.append("invalid domain name \(name.debugDescription)") }
                        continue
                    }
                    let length = Int(sqlite3_column_bytes(raw, 2))
                    let bytes = UnsafeBufferPointer(
                        start: sqlite3_column_blob(raw, 2)?.assumingMemoryBound(to: UInt8.self), count: length)
                    do {
                        keys[key] = try PropertyListValue(encoded: bytes)
                    } catch {
                        skippedCount += 1
                        if skipped.count < 10 { skipped.append("\(currentDomain) \(key.debugDescription): \(error)") }
                    }
                }
                finishDomain()
                return domains
            }
        } catch {
            throw .readFailed(reason: StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))
        }
        if skippedCount > 0 {
            logger.error(
                "\(skippedCount) stored preferences in \(files.databasePath) cannot be read and were left out: \(skipped.joined(separator: "; "))",
                metadata: ["store": "\(files.databasePath)"])
        }
        return result
    }

    /// The text of `column` of the current row, as Swift text.
    private static func text(_ statement: SQLiteStatement, column: Int32) -> String {
        let length = Int(sqlite3_column_bytes(statement, column))
        guard let pointer = sqlite3_column_text(statement, column) else { return "" }
        return String(decoding: UnsafeBufferPointer(start: pointer, count: length), as: UTF8.self)
    }
}
