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
        // v3: the journal's sequence without AUTOINCREMENT. AUTOINCREMENT keeps its counter in
        // `sqlite_sequence`, a page of its own that every commit rewrote: one WAL frame of five
        // for a one-key write. Sequences still never repeat: a new change takes one
        // past the highest of the newest change kept, the horizon (the newest change dropped,
        // see `Journal.swift`) and `issued`, the counter AUTOINCREMENT had reached, kept here
        // once.
        migrator.registerMigration("v3-sequence") { db in
            try db.execute(
                sql: """
                    ALTER TABLE history_horizon ADD COLUMN issued INTEGER NOT NULL DEFAULT 0;
                    UPDATE history_horizon
                        SET issued = coalesce((SELECT seq FROM sqlite_sequence WHERE name = 'history_change'), 0)
                        WHERE id = 1;
                    CREATE TABLE history_change_v3(
                        sequence INTEGER PRIMARY KEY,
                        time INTEGER NOT NULL,
                        domain TEXT NOT NULL,
                        who TEXT NOT NULL,
                        stored INTEGER NOT NULL,
                        entries INTEGER NOT NULL,
                        bytes INTEGER NOT NULL
                    );
                    INSERT INTO history_change_v3(sequence, time, domain, who, stored, entries, bytes)
                        SELECT sequence, time, domain, who, stored, entries, bytes FROM history_change;
                    DROP TABLE history_change;
                    ALTER TABLE history_change_v3 RENAME TO history_change;
                    CREATE INDEX history_change_domain ON history_change(domain, sequence);
                    """)
        }
        // v4: the GVariant type each key was last given through dconf's protocol, so that
        // dconf's database file holds it back exactly as written (`i`, `u`, `as`, …; the
        // stored value keeps prefsd's canonical form). Not journaled: a revert keeps types.
        migrator.registerMigration("v4-gvariant-type") { db in
            try db.execute(
                sql: """
                    CREATE TABLE gvariant_type(
                        domain TEXT NOT NULL,
                        key TEXT NOT NULL,
                        type TEXT NOT NULL,
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
    static let selectValue = "SELECT value FROM preference WHERE domain = ? AND key = ?"
    static let selectDomain = "SELECT key, value FROM preference WHERE domain = ? ORDER BY key"
    /// A change of the journal, numbered one past every sequence issued before (v3).
    static let insertChange = """
        INSERT INTO history_change(sequence, time, domain, who, stored, entries, bytes)
        VALUES ((SELECT max(coalesce((SELECT max(sequence) FROM history_change), 0), dropped, issued) + 1
                 FROM history_horizon WHERE id = 1), ?, ?, ?, ?, ?, ?)
        """
    static let insertEntry = "INSERT OR REPLACE INTO history_entry(sequence, key, value, previous) VALUES (?, ?, ?, ?)"
    static let selectAll = "SELECT domain, key, value FROM preference ORDER BY domain"
    static let upsertType = "INSERT INTO gvariant_type(domain, key, type) VALUES (?, ?, ?) ON CONFLICT(domain, key) DO UPDATE SET type = excluded.type"
    static let deleteType = "DELETE FROM gvariant_type WHERE domain = ? AND key = ?"
    static let selectTypes = "SELECT domain, key, type FROM gvariant_type"
}
