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
        // v5: the journal in one table, one row per key a change touched, without the
        // domain index. A one-key write adds one page to its commit (the table's newest),
        // where the change's row, its entry's row and the domain index's row took three.
        // A change's `bytes` are the sum of its rows' (all on its first key's row here).
        // Reads of one domain scan the journal newest first, which costs about 15 ms at the
        // default bound of 100,000 entries when the domain has few entries: history is read
        // by a person now and then, the store is written all the time. `issued` takes in the
        // newest change, so no sequence is given twice whatever was dropped.
        migrator.registerMigration("v5-one-journal-table") { db in
            try db.execute(
                sql: """
                    CREATE TABLE history(
                        sequence INTEGER NOT NULL,
                        key TEXT NOT NULL,
                        time INTEGER NOT NULL,
                        domain TEXT NOT NULL,
                        who TEXT NOT NULL,
                        stored INTEGER NOT NULL,
                        value BLOB,
                        previous BLOB,
                        bytes INTEGER NOT NULL,
                        PRIMARY KEY(sequence, key)
                    ) WITHOUT ROWID;
                    INSERT INTO history(sequence, key, time, domain, who, stored, value, previous, bytes)
                        SELECT e.sequence, e.key, c.time, c.domain, c.who, c.stored, e.value, e.previous,
                            CASE WHEN e.key = (SELECT min(f.key) FROM history_entry f WHERE f.sequence = e.sequence)
                                THEN c.bytes ELSE 0 END
                        FROM history_change c JOIN history_entry e ON e.sequence = c.sequence;
                    UPDATE history_horizon
                        SET issued = max(issued, coalesce((SELECT max(sequence) FROM history_change), 0))
                        WHERE id = 1;
                    DROP INDEX history_change_domain;
                    DROP TABLE history_change;
                    DROP TABLE history_entry;
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
    /// One key of one change of the journal (v5).
    static let insertHistory = """
        INSERT INTO history(sequence, key, time, domain, who, stored, value, previous, bytes)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
        """
    /// The highest sequence the journal has issued: its newest change, or one dropped or
    /// issued before (v3), whichever is higher; a new change takes one past it.
    static let selectIssued = """
        SELECT max(coalesce((SELECT max(sequence) FROM history), 0), dropped, issued)
        FROM history_horizon WHERE id = 1
        """
    static let selectAll = "SELECT domain, key, value FROM preference ORDER BY domain"
    static let upsertType = "INSERT INTO gvariant_type(domain, key, type) VALUES (?, ?, ?) ON CONFLICT(domain, key) DO UPDATE SET type = excluded.type"
    static let deleteType = "DELETE FROM gvariant_type WHERE domain = ? AND key = ?"
    static let selectTypes = "SELECT domain, key, type FROM gvariant_type"
}
