import GRDB

/// SQLite's `PRAGMA quick_check`, table by table: the store's own tables are checked as it
/// opens (`StoreOpener.swift`), the change journal's once it is open, before its first commit
/// (`JournalCheck.swift`), so that answers need not wait for a pass over the journal, the
/// larger part of a full store. (Table by table, SQLite does not walk the list of free
/// pages; it checks each free page as it reuses it.)
enum IntegrityCheck {
    /// Whether `table` is one of the change journal's.
    private static func isJournal(_ table: String) -> Bool {
        table.hasPrefix("history")
    }

    /// What `PRAGMA quick_check` finds wrong in the journal's tables (`journal`), or in the
    /// schema and every other table, with their indexes, as a reason to report: `nil` when
    /// they are sound.
    static func damage(journal: Bool, in db: Database) throws -> String? {
        let tables = try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
            .filter { isJournal($0) == journal }
        let problems = try (journal ? tables : ["sqlite_schema"] + tables).flatMap { table in
            try String.fetchAll(db, sql: "PRAGMA quick_check(\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\")")
                .filter { $0 != "ok" }
        }
        return problems.isEmpty ? nil : "quick_check: " + problems.prefix(3).joined(separator: "; ")
    }
}
