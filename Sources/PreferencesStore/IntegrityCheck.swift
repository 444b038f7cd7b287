import GRDB

/// SQLite's `PRAGMA quick_check`, table by table: the store's own tables are checked as it
/// opens (`StoreOpener.swift`), the change journal's once it is open, before its first commit
/// (`JournalCheck.swift`), so that answers need not wait for a pass over the journal, the
/// larger part of a full store. (Table by table, SQLite does not walk the list of free
/// pages; it checks each free page as it reuses it.)
enum IntegrityCheck {
    /// Whether `table` is one of the change journal's.
    static func isJournal(_ table: String) -> Bool {
        table.hasPrefix("history")
    }

    /// The tables of the database, by name.
    static func tables(in db: Database) throws -> [String] {
        try String.fetchAll(db, sql: "SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
    }

    /// What `PRAGMA quick_check` finds wrong in `tables` and their indexes (empty: nothing).
    static func problems(of tables: [String], in db: Database) throws -> [String] {
        try tables.flatMap { table in
            try String.fetchAll(db, sql: "PRAGMA quick_check(\"\(table.replacingOccurrences(of: "\"", with: "\"\""))\")")
                .filter { $0 != "ok" }
        }
    }
}
