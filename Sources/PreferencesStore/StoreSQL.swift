import GRDB

/// The SQL of the store as prefsd runs it, for the benchmark's store floor
/// (`BenchmarkKit.StoreFloorService`), which keeps its writes the same way.
@_spi(Testing) public struct StoreSQL: Sendable {
    /// The preferences' and the change journal's tables, as SQLite keeps them once the
    /// store's migrations have run.
    public let tables: [String]
    /// The statements of a one-key write, in the order the writer runs them: `BEGIN`, the
    /// key's previous value, the value's upsert, the journal's row, `COMMIT`.
    public let statements: (begin: String, previous: String, upsert: String, journal: String, commit: String)

    /// The SQL of this version of prefsd's store.
    public static func current() throws -> StoreSQL {
        let database = try DatabaseQueue()
        try StoreSchema.migrator.migrate(database)
        let tables = try database.read { db in
            try String.fetchAll(
                db, sql: "SELECT sql FROM sqlite_schema WHERE name IN (?, ?) ORDER BY name", arguments: [StoreSchema.table, "history"])
        }
        return StoreSQL(
            tables: tables,
            statements: (
                StoreSchema.begin, StoreSchema.selectValue, StoreSchema.upsert, StoreSchema.insertHistory, StoreSchema.commit
            ))
    }
}
