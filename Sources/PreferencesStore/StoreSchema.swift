import GRDB

/// The store's schema, kept by a GRDB migrator: each release only appends migrations.
enum StoreSchema {
    /// The name of the one table.
    static let table = "preference"

    /// Every migration this version of prefsd knows, oldest first.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(sql: """
                CREATE TABLE preference(
                    domain TEXT NOT NULL,
                    key TEXT NOT NULL,
                    value BLOB NOT NULL,
                    PRIMARY KEY(domain, key)
                ) WITHOUT ROWID
                """)
        }
        return migrator
    }

    static let begin = "BEGIN IMMEDIATE TRANSACTION"
    static let commit = "COMMIT TRANSACTION"
    static let upsert = "INSERT INTO preference(domain, key, value) VALUES (?, ?, ?) ON CONFLICT(domain, key) DO UPDATE SET value = excluded.value"
    static let delete = "DELETE FROM preference WHERE domain = ? AND key = ?"
    static let deleteDomain = "DELETE FROM preference WHERE domain = ?"
    static let selectAll = "SELECT domain, key, value FROM preference ORDER BY domain"
}
