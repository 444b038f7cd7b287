import GRDB

/// The store's schema, kept by a GRDB migrator: each release only appends migrations.
enum StoreSchema {
    /// The name of the one table.
    static let table = "preference"

    /// Every migration this version of prefsd knows, oldest first.
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1") { db in
            try db.execute(
                sql: """
                    CREATE TABLE preference(
                        domain TEXT NOT NULL,
                        key TEXT NOT NULL,
                        value BLOB NOT NULL,
                        PRIMARY KEY(domain, key)
                    ) WITHOUT ROWID
                    """)
        }
        // v2: the change journal (see `Journal.swift`). A store from before it starts with an
        // empty journal: "before every recorded change" is then the store as it was migrated.
        migrator.registerMigration("v2-history") { db in
            try db.execute(
                sql: """
                    CREATE TABLE history_change(
                        sequence INTEGER PRIMARY KEY AUTOINCREMENT,
                        time INTEGER NOT NULL,
                        domain TEXT NOT NULL,
                        who TEXT NOT NULL,
                        stored INTEGER NOT NULL,
                        entries INTEGER NOT NULL,
                        bytes INTEGER NOT NULL
                    );
                    CREATE INDEX history_change_domain ON history_change(domain, sequence);
                    CREATE TABLE history_entry(
                        sequence INTEGER NOT NULL,
                        key TEXT NOT NULL,
                        value BLOB,
                        previous BLOB,
                        PRIMARY KEY(sequence, key)
                    ) WITHOUT ROWID;
                    CREATE TABLE history_horizon(
                        id INTEGER PRIMARY KEY CHECK (id = 1),
                        dropped INTEGER NOT NULL
                    );
                    INSERT INTO history_horizon(id, dropped) VALUES (1, 0);
                    """)
        }
        return migrator
    }

    static let begin = "BEGIN IMMEDIATE TRANSACTION"
    static let commit = "COMMIT TRANSACTION"
    static let upsert = "INSERT INTO preference(domain, key, value) VALUES (?, ?, ?) ON CONFLICT(domain, key) DO UPDATE SET value = excluded.value"
    static let delete = "DELETE FROM preference WHERE domain = ? AND key = ?"
    static let deleteDomain = "DELETE FROM preference WHERE domain = ?"
    static let selectValue = "SELECT value FROM preference WHERE domain = ? AND key = ?"
    static let selectDomain = "SELECT key, value FROM preference WHERE domain = ? ORDER BY key"
    static let insertChange = "INSERT INTO history_change(time, domain, who, stored, entries, bytes) VALUES (?, ?, ?, ?, ?, ?)"
    static let insertEntry = "INSERT OR REPLACE INTO history_entry(sequence, key, value, previous) VALUES (?, ?, ?, ?)"
    static let selectAll = "SELECT domain, key, value FROM preference ORDER BY domain"
}
