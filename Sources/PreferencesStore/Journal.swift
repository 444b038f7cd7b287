import Foundation
import GRDB
import PreferencesModel

/// How large the journal may grow; past either bound the oldest changes are dropped, whole.
public struct HistoryBounds: Sendable, Hashable {
    /// Most key entries kept (`prefsd --history-entries`); 0 keeps no history.
    public var entries: Int
    /// Most bytes kept (`prefsd --history-size`), counted as ``Journal/entryBytes(key:value:previous:)``
    /// for each entry plus ``Journal/changeOverhead`` and the domain's and who's names for
    /// each change.
    public var bytes: Int

    /// The defaults: 100,000 entries, 32 MiB.
    public static let defaults = HistoryBounds(entries: 100_000, bytes: 32 << 20)

    /// Bounds given one by one.
    public init(entries: Int, bytes: Int) {
        self.entries = entries
        self.bytes = bytes
    }
}

/// The change journal's bookkeeping: the sizes it counts and the totals it keeps.
public enum Journal {
    /// Bytes counted for each change besides its entries, its domain's and who's names.
    public static let changeOverhead = 48
    /// Bytes counted for each entry besides its key and values.
    public static let entryOverhead = 16
    /// What the journal stores as the value and previous value of a key a settings bundle
    /// marks `IsSecure`: the empty blob, which no value encodes to.
    static let secureMarker: [UInt8] = []

    /// What one entry counts against ``HistoryBounds/bytes``.
    static func entryBytes(key: String, value: [UInt8]?, previous: [UInt8]?) -> Int {
        key.utf8.count + (value?.count ?? 0) + (previous?.count ?? 0) + entryOverhead
    }
}

/// What one batch changes in one domain, as the journal records it: one change.
struct JournalChange {
    let domain: DomainName
    /// key → (new value, previous value); the first previous of a key wins.
    var entries: [String: (value: [UInt8]?, previous: [UInt8]?)] = [:]
    /// The keys in the order first touched.
    var order: [String] = []
    /// Whether the change stores something (else it only notes what readers see).
    var stored = false

    init(domain: DomainName) {
        self.domain = domain
    }

    mutating func note(_ key: String, value: [UInt8]?, previous: [UInt8]?) {
        if let old = entries[key] {
            entries[key] = (value, old.previous)
        } else {
            entries[key] = (value, previous)
            order.append(key)
        }
    }
}

/// The journal's totals, kept beside the database by the writer.
struct JournalTotals: Sendable {
    var entries = 0
    var bytes = 0
    /// Whether `entries` and `bytes` were counted from the journal: the count reads the
    /// whole journal, so it runs on the writer queue after the store opens, not on the
    /// way to the first answer (``DomainStore/checkJournal()``).
    var counted = false
    /// The highest sequence issued (``StoreSchema/selectIssued``): the writer numbers each
    /// new change one past it, and no sequence is ever given twice.
    var issued: Int64 = 0
}

extension DomainStore {
    /// Writes the journal of `batch` (its mutations applied meanwhile with `apply`), in the
    /// transaction under way: reads each key's previous value before its mutation runs, and
    /// records one change per domain the batch touches, numbered on from `issued`.
    /// Returns what the changes added to the journal, and their sequence numbers. Without `recording` (on a full disk)
    /// it only applies the mutations. `apply` gets each mutation with the encoding of the
    /// value it sets (``PropertyListValue/encoded()``, made once for both), nil for others.
    func journal(
        _ batch: PendingBatch, in db: Database, time: Int64, issued: Int64, recording: Bool = true,
        secure: [DomainName: Set<String>] = [:], apply: (StoreMutation, _ encoded: [UInt8]?) throws -> Void
    ) throws -> (totals: JournalTotals, sequences: [UInt64]) {
        guard recording else {
            for mutation in batch.mutations {
                if case .set(_, _, let value) = mutation { try apply(mutation, value.encoded()) } else { try apply(mutation, nil) }
            }
            return (JournalTotals(issued: issued), [])
        }
        // Per domain, in the order first touched: one change of the journal each.
        var changes: [JournalChange] = []
        let select = try db.cachedStatement(sql: StoreSchema.selectValue)
        func previous(_ domain: DomainName, _ key: String) throws -> [UInt8]? {
            try select.firstBlob([.text(domain.rawValue), .text(key)])
        }
        func change(_ domain: DomainName) -> Int {
            if let index = changes.lastIndex(where: { $0.domain == domain }) { return index }
            changes.append(JournalChange(domain: domain))
            return changes.count - 1
        }
        for mutation in batch.mutations {
            var encoded: [UInt8]?
            switch mutation {
            case .set(let name, let key, let value):
                encoded = value.encoded()
                let index = change(name)
                changes[index].stored = true
                changes[index].note(key, value: encoded, previous: try previous(name, key))
            case .remove(let name, let key):
                let index = change(name)
                changes[index].stored = true
                if let old = try previous(name, key) { changes[index].note(key, value: nil, previous: old) }
            case .removeDomain(let name):
                let index = change(name)
                changes[index].stored = true
                let rows = try Row.fetchAll(db.cachedStatement(sql: StoreSchema.selectDomain), arguments: [name.rawValue])
                for row in rows {
                    let key: String = row[0]
                    let old: Data = row[1]
                    changes[index].note(key, value: nil, previous: [UInt8](old))
                }
            case .note(let name, let key, let value, let previous):
                changes[change(name)].note(key, value: value?.encoded(), previous: previous?.encoded())
            case .setGVariantType:
                break
            }
            try apply(mutation, encoded)
        }
        var totals = JournalTotals(issued: issued)
        var sequences: [UInt64] = []
        let insert = try db.cachedStatement(sql: StoreSchema.insertHistory)
        for var journalChange in changes {
            let domain = journalChange.domain
            // A key set back to the value it had is no change (a removal then a set, say).
            let changed = journalChange.order.filter { journalChange.entries[$0]?.value != journalChange.entries[$0]?.previous }
            if changed.isEmpty { continue }
            // Keys a settings bundle marks IsSecure: recorded as changed, their values as the
            // empty blob (no value's encoding is empty), never the values themselves.
            if let hidden = secure[domain] {
                for key in changed where hidden.contains(key) { journalChange.entries[key] = (Journal.secureMarker, Journal.secureMarker) }
            }
            totals.issued += 1
            let sequence = totals.issued
            sequences.append(UInt64(sequence))
            // The change's own bytes are counted on its first row, each entry's on its own.
            var bytes = Journal.changeOverhead + domain.rawValue.utf8.count + batch.who.utf8.count
            for key in changed {
                guard let entry = journalChange.entries[key] else { continue }
                bytes += Journal.entryBytes(key: key, value: entry.value, previous: entry.previous)
                try insert.run([
                    .integer(sequence), .text(key), .integer(time), .text(domain.rawValue), .text(batch.who),
                    .integer(journalChange.stored ? 1 : 0), .blob(entry.value), .blob(entry.previous), .integer(Int64(bytes)),
                ])
                totals.entries += 1
                totals.bytes += bytes
                bytes = 0
            }
        }
        return (totals, sequences)
    }

    /// Drops the oldest changes, whole, until `totals` is within `bounds`, in the
    /// transaction under way. Returns the totals left.
    func trimJournal(_ totals: JournalTotals, to bounds: HistoryBounds, in db: Database) throws -> JournalTotals {
        var totals = totals
        if bounds.entries <= 0 || bounds.bytes <= 0 {
            if totals.entries == 0 && totals.bytes == 0 { return totals }
            // Everything goes: DELETE without WHERE lets SQLite free whole tables' pages at
            // once, which takes little room in the WAL (this runs on a full disk).
            let last = try Int64.fetchOne(db, sql: "SELECT max(sequence) FROM history") ?? 0
            try db.execute(sql: "DELETE FROM history")
            try db.execute(sql: "UPDATE history_horizon SET dropped = max(dropped, ?) WHERE id = 1", arguments: [last])
            return JournalTotals(counted: true, issued: totals.issued)
        }
        // Within bounds (every commit until the journal fills): nothing to prepare or run.
        guard totals.entries > bounds.entries || totals.bytes > bounds.bytes else { return totals }
        var dropped: Int64 = 0
        let oldest = try db.cachedStatement(
            sql: "SELECT sequence, count(*), sum(bytes) FROM history WHERE sequence = (SELECT min(sequence) FROM history)")
        let delete = try db.cachedStatement(sql: "DELETE FROM history WHERE sequence = ?")
        while totals.entries > bounds.entries || totals.bytes > bounds.bytes {
            guard let row = try Row.fetchOne(oldest), let sequence = row[0] as Int64? else {
                totals = JournalTotals(counted: true, issued: totals.issued)
                break
            }
            try delete.execute(arguments: [sequence])
            totals.entries -= row[1] as Int
            totals.bytes -= row[2] as Int
            dropped = sequence
        }
        if dropped > 0 {
            try db.execute(sql: "UPDATE history_horizon SET dropped = max(dropped, ?) WHERE id = 1", arguments: [dropped])
        }
        return totals
    }

    /// The highest sequence issued, read when the store opens (from the journal's key and
    /// its horizon: a few pages); the journal's entries and bytes are counted later, by
    /// ``checkJournal()``.
    static func loadJournalIssued(_ database: DatabaseQueue) throws -> JournalTotals {
        try database.read { db in JournalTotals(issued: try Int64.fetchOne(db, sql: StoreSchema.selectIssued) ?? 0) }
    }

    /// `totals` with the journal's entries and bytes counted in `db`: every row is read.
    static func counted(_ totals: JournalTotals, in db: Database) throws -> JournalTotals {
        let row = try Row.fetchOne(db, sql: "SELECT count(*), coalesce(sum(bytes), 0) FROM history")
        return JournalTotals(entries: row?[0] ?? 0, bytes: row?[1] ?? 0, counted: true, issued: totals.issued)
    }

    // MARK: Reading

    /// The journal's entries of `domain` (every domain when `nil`; of `key` only, when given) with a sequence above
    /// `after`, oldest first: at most `limit` of them, and no more than about `maxBytes` of
    /// values, ending on a whole change (a single change larger than that comes whole).
    /// Keys of one change come in key order. `newest`: the newest `limit` entries instead
    /// (within `maxBytes`), still oldest first; the oldest change among them may be cut.
    public func history(
        domain: DomainName?, key: String?, after: UInt64, limit: Int, maxBytes: Int, newest: Bool = false
    ) throws(StoreError) -> [HistoryEntry] {
        try history(from: database, domain: domain, key: key, after: after, limit: limit, maxBytes: maxBytes, newest: newest)
    }

    /// ``history(domain:key:after:limit:maxBytes:newest:)`` through `reader`.
    func history(
        from reader: any DatabaseReader, domain: DomainName?, key: String?, after: UInt64, limit: Int,
        maxBytes: Int, newest: Bool = false
    ) throws(StoreError) -> [HistoryEntry] {
        if newest { return try recentHistory(from: reader, domain: domain, key: key, limit: limit, maxBytes: maxBytes).entries }
        do {
            return try reader.read { db in
                let (sql, arguments) = Self.historyQuery(domain: domain, key: key, after: after, newestFirst: false)
                var result: [HistoryEntry] = []
                var bytes = 0
                // Where the change being read started in `result`: a reply never ends in
                // the middle of a change, so a caller reads on with `after` = its last
                // sequence. A single change larger than the limits comes whole.
                var changeStart = 0
                var full = false
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
                while let row = try cursor.next() {
                    let sequence = UInt64(row[0] as Int64)
                    if sequence != result.last?.sequence {
                        if full { break }
                        changeStart = result.count
                    }
                    guard let (entry, size) = try Self.entry(row) else { continue }
                    bytes += size
                    if !full && (result.count >= limit || bytes > maxBytes) {
                        if changeStart > 0 {
                            result.removeSubrange(changeStart...)
                            break
                        }
                        full = true
                    }
                    result.append(entry)
                }
                return result
            }
        } catch {
            throw .readFailed(reason: StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))
        }
    }

    /// The newest `limit` entries of `domain` (of `key` only, when given), oldest first,
    /// within about `maxBytes` of values: read from the newest backwards, so the cost does
    /// not grow with the journal when the newest entries are the domain's (one domain's
    /// entries lying far back cost a scan to them). `oldestCut`: a bound was reached inside
    /// the oldest change among them (the journal holds more of its entries).
    func recentHistory(
        from reader: any DatabaseReader, domain: DomainName?, key: String?, limit: Int, maxBytes: Int
    ) throws(StoreError) -> (entries: [HistoryEntry], oldestCut: Bool) {
        do {
            return try reader.read { db in
                let (sql, arguments) = Self.historyQuery(domain: domain, key: key, after: 0, newestFirst: true)
                var result: [HistoryEntry] = []
                var bytes = 0
                var cut = false
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
                while let row = try cursor.next() {
                    guard let (entry, size) = try Self.entry(row) else { continue }
                    if result.count >= limit || (bytes + size > maxBytes && !result.isEmpty) {
                        cut = entry.sequence == result.last?.sequence
                        break
                    }
                    bytes += size
                    result.append(entry)
                }
                return (result.reversed(), cut)
            }
        } catch {
            throw .readFailed(reason: StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))
        }
    }

    /// The journal's rows of `domain` (every domain when `nil`; of `key` only, when given)
    /// with a sequence above `after`, oldest first (or newest first), keys of one change in
    /// key order (or its reverse): what ``entry(_:)`` reads. Both orders are the journal's
    /// primary key, so no read sorts.
    private static func historyQuery(
        domain: DomainName?, key: String?, after: UInt64, newestFirst: Bool
    ) -> (sql: String, arguments: StatementArguments) {
        var sql = "SELECT sequence, time, who, key, value, previous, domain FROM history WHERE sequence > ?"
        var arguments: StatementArguments = [Int64(clamping: after)]
        if let domain {
            sql += " AND domain = ?"
            arguments += [domain.rawValue]
        }
        if let key {
            sql += " AND key = ?"
            arguments += [key]
        }
        sql += newestFirst ? " ORDER BY sequence DESC, key DESC" : " ORDER BY sequence, key"
        return (sql, arguments)
    }

    /// The entry of a journal row (sequence, time, who, key, value, previous, domain) and
    /// the bytes it counts for in a reply; `nil` for a row no reply may carry (a domain
    /// name or values an older prefsd journalled without the store's rules).
    private static func entry(_ row: Row) throws -> (HistoryEntry, Int)? {
        let sequence = UInt64(row[0] as Int64)
        let value: Data? = row[4]
        let previous: Data? = row[5]
        guard let name = try? DomainName(row[6] as String) else { return nil }
        if value?.isEmpty == true {
            let entry = HistoryEntry(
                sequence: sequence, time: row[1], domain: name, key: row[3], who: row[2], value: nil, previous: nil, secure: true)
            return (entry, 64)
        }
        let entry = HistoryEntry(
            sequence: sequence, time: row[1], domain: name, key: row[3], who: row[2],
            value: try value.map { try PropertyListValue(encoded: $0) },
            previous: try previous.map { try PropertyListValue(encoded: $0) })
        if breaksRules(entry.key, entry.value, entry.previous) { return nil }
        return (entry, (value?.count ?? 0) + (previous?.count ?? 0) + 64)
    }

    /// What putting `domain` (only `key`, when given) back as it was right after change
    /// `sequence` takes: for each key a recorded change of stored data touched since, its
    /// value then (`nil`: absent). `nil` when the journal no longer reaches back that far.
    public func revertTargets(domain: DomainName, key: String?, to sequence: UInt64) throws(StoreError) -> [String: PropertyListValue?]? {
        do {
            return try database.read { db -> [String: PropertyListValue?]? in
                let dropped = try Int64.fetchOne(db, sql: "SELECT dropped FROM history_horizon WHERE id = 1") ?? 0
                if Int64(clamping: sequence) < dropped { return nil }
                var sql = "SELECT key, previous FROM history WHERE sequence > ? AND domain = ? AND stored = 1"
                var arguments: StatementArguments = [Int64(clamping: sequence), domain.rawValue]
                if let key {
                    sql += " AND key = ?"
                    arguments += [key]
                }
                sql += " ORDER BY sequence"
                var targets: [String: PropertyListValue?] = [:]
                // Keys recorded without values (IsSecure) are left as they are.
                var secret = Set<String>()
                let cursor = try Row.fetchCursor(db, sql: sql, arguments: arguments)
                while let row = try cursor.next() {
                    let key: String = row[0]
                    if targets.keys.contains(key) || secret.contains(key) { continue }
                    let previous: Data? = row[1]
                    if previous?.isEmpty == true { secret.insert(key); continue }
                    let value = try previous.map { try PropertyListValue(encoded: $0) }
                    // A key or value the store may not hold (journalled by an older prefsd)
                    // is not put back.
                    if Self.breaksRules(key, value, nil) { continue }
                    targets[key] = .some(value)
                }
                return targets
            }
        } catch {
            throw .readFailed(reason: StoreError.explain(error, path: files.databasePath, directory: files.directoryPath))
        }
    }

    /// Whether a journalled key or value breaks the store's rules (`StoreRules.swift` in
    /// PreferencesModel).
    static func breaksRules(_ key: String, _ value: PropertyListValue?, _ previous: PropertyListValue?) -> Bool {
        PreferenceKey.storedKeyProblem(key) != nil || value?.storeProblem != nil || previous?.storeProblem != nil
    }

    /// The journal's totals: entries and bytes, as the bounds count them, once every
    /// commit queued before is done (the count made at open included). Not to be called
    /// on the writer queue.
    public var historyTotals: (entries: Int, bytes: Int) {
        let totals = writerQueue.sync { journalTotals.withLock { $0 } }
        return (totals.entries, totals.bytes)
    }
}
