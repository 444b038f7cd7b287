import Foundation
import GRDB
import GRDBSQLite
import PreferencesModel

extension DomainStore {
    /// Every stored domain and its keys, read in one pass at start-up.
    ///
    /// A row whose domain name is invalid, whose value cannot be decoded (a damaged or
    /// foreign store) or whose key or value breaks the store's rules (stored by an older
    /// prefsd that did not check them) is left out and logged as an error; the row itself
    /// stays on disk, and ``leftOutKeys`` names it, so that removing the key or its domain
    /// removes it.
    /// - Throws: ``StoreError/readFailed(reason:)`` when SQLite cannot read the database,
    ///   ``StoreError/closed`` after ``close()``.
    public func loadAll() throws(StoreError) -> [DomainName: [String: PropertyListValue]] {
        if writer.withLock({ $0.closed }) { throw .closed }
        var skipped: [String] = []
        var skippedCount = 0
        var leftOut: [DomainName: [String]] = [:]
        let result: [DomainName: [String: PropertyListValue]]
        do {
            // On a read-only connection of its own, so that ``loadDomain(_:)`` (and the writer)
            // are not held up while it runs. One pass in key order: a small page cache does,
            // and keeps the peak memory down.
            let reader = try files.readOnlyConnection(label: "prefsd.store.load", cacheKiB: 128)
            defer { try? reader.close() }
            result = try reader.read { db in
                let statement = try db.makeStatement(sql: StoreSchema.selectAll)
                let raw = statement.sqliteStatement
                var domains: [DomainName: [String: PropertyListValue]] = [:]
                // The current domain's name as stored: rows come sorted by domain, so its
                // String is made once per domain, not once per row.
                var currentName: [UInt8]?
                var currentDomain: DomainName?
                var keys: [String: PropertyListValue] = [:]
                leftOut = [:]

                func finishDomain() {
                    if let currentDomain, !keys.isEmpty { domains[currentDomain] = keys }
                    keys = [:]
                }

                while true {
                    let code = sqlite3_step(raw)
                    if code == SQLITE_DONE { break }
                    guard code == SQLITE_ROW else { throw statement.failure(code) }
                    let nameBytes = Self.bytes(raw, column: 0)
                    if currentName.map({ !$0.elementsEqual(nameBytes) }) ?? true {
                        finishDomain()
                        currentName = Array(nameBytes)
                        currentDomain = try? DomainName(String(decoding: nameBytes, as: UTF8.self))
                    }
                    let key = Self.text(raw, column: 1)
                    guard let currentDomain else {
                        skippedCount += 1
                        if skipped.count < 10 { skipped.append("invalid domain name \(String(decoding: nameBytes, as: UTF8.self).debugDescription)") }
                        continue
                    }
                    let problem: String
                    switch Self.storedValue(raw, column: 2, domain: currentDomain, key: key) {
                    case .success(let value):
                        keys[key] = value
                        continue
                    case .failure(let broken):
                        problem = broken.reason
                    }
                    skippedCount += 1
                    if skipped.count < 10 { skipped.append(problem) }
                    leftOut[currentDomain, default: []].append(key)
                }
                finishDomain()
                return domains
            }
        } catch {
            throw .readFailed(reason: StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))
        }
        if skippedCount > 0 {
            logger.error(
                "\(skippedCount) stored preferences in \(files.databasePath) cannot be read and were left out (remove them with prefs delete DOMAIN KEY): \(skipped.joined(separator: "; "))",
                metadata: ["store": "\(files.databasePath)"])
        }
        leftOutRows.withLock { $0 = leftOut }
        return result
    }

    /// One stored domain's keys, read when the service first needs them: exactly what
    /// ``loadAll()`` holds for `domain` (nothing for a domain with no readable key), and the
    /// keys it would leave out, as stored. Nothing is logged: the service's full load at
    /// start logs what it leaves out, once.
    /// - Throws: ``StoreError/readFailed(reason:)`` when SQLite cannot read the database,
    ///   ``StoreError/closed`` after ``close()``.
    public func loadDomain(_ domain: DomainName) throws(StoreError) -> (entries: [String: PropertyListValue], leftOut: [String]) {
        if writer.withLock({ $0.closed }) { throw .closed }
        do {
            return try database.read { db in
                let statement = try db.makeStatement(sql: StoreSchema.selectDomain)
                try statement.setArguments([domain.rawValue])
                let raw = statement.sqliteStatement
                var entries: [String: PropertyListValue] = [:]
                var leftOut: [String] = []
                while true {
                    let code = sqlite3_step(raw)
                    if code == SQLITE_DONE { break }
                    guard code == SQLITE_ROW else { throw statement.failure(code) }
                    let key = Self.text(raw, column: 0)
                    switch Self.storedValue(raw, column: 1, domain: domain, key: key) {
                    case .success(let value): entries[key] = value
                    case .failure: leftOut.append(key)
                    }
                }
                return (entries, leftOut)
            }
        } catch {
            throw .readFailed(reason: StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))
        }
    }

    /// Why a stored row is left out: its value does not decode, or it breaks the store's rules.
    struct LeftOutRow: Error {
        /// The problem, naming the domain and key, as logged.
        let reason: String
    }

    /// The value in blob `column` of the current row of `domain`'s `key`, or why it is left
    /// out (see ``loadAll()``).
    private static func storedValue(
        _ statement: SQLiteStatement, column: Int32, domain: DomainName, key: String
    ) -> Result<PropertyListValue, LeftOutRow> {
        let blob = sqlite3_column_blob(statement, column)
        let bytes = UnsafeRawBufferPointer(start: blob, count: Int(sqlite3_column_bytes(statement, column)))
        do {
            let value = try PropertyListValue(encoded: bytes)
            if let broken = StoreMutation.set(domain, key: key, value: value).problem { return .failure(LeftOutRow(reason: broken)) }
            return .success(value)
        } catch {
            return .failure(LeftOutRow(reason: "\(domain) \(key.debugDescription): \(error)"))
        }
    }

    /// The GVariant types keys were last given through dconf's protocol (see
    /// ``StoreMutation/setGVariantType(_:key:type:)``), per domain; rows with an invalid
    /// domain name are skipped.
    /// - Throws: ``StoreError/readFailed(reason:)`` when SQLite cannot read the database,
    ///   ``StoreError/closed`` after ``close()``.
    public func loadGVariantTypes() throws(StoreError) -> [DomainName: [String: String]] {
        if writer.withLock({ $0.closed }) { throw .closed }
        do {
            return try database.read { db in
                var types: [DomainName: [String: String]] = [:]
                for row in try Row.fetchAll(db, sql: StoreSchema.selectTypes) {
                    guard let domain = try? DomainName(row[0] as String) else { continue }
                    types[domain, default: [:]][row[1] as String] = row[2] as String
                }
                return types
            }
        } catch {
            throw .readFailed(reason: StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))
        }
    }

    /// The keys the latest ``loadAll()`` left out because they or their values break the
    /// store's rules or do not decode, as stored (their bytes as they are), per domain.
    public var leftOutKeys: [DomainName: [String]] { leftOutRows.withLock { $0 } }

    /// The text of `column` of the current row, as Swift text.
    private static func text(_ statement: SQLiteStatement, column: Int32) -> String {
        String(decoding: bytes(statement, column: column), as: UTF8.self)
    }

    /// The UTF-8 bytes of text `column` of the current row, valid until the next step.
    private static func bytes(_ statement: SQLiteStatement, column: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let pointer = sqlite3_column_text(statement, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: pointer, count: Int(sqlite3_column_bytes(statement, column)))
    }
}
