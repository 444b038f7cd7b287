import GVDB

/// dconf's databases in GVDB: what dconf-service writes to `$XDG_CONFIG_HOME/dconf/user`
/// and what dconf's engine and `dconf_gvdb_utils_changeset_from_table` read from it.
///
/// A database holds each key (`/org/gnome/desktop/interface/color-scheme`) as a value, and
/// every directory above a key (`/`, `/org/`, `/org/gnome/`, …) as a directory item listing
/// its children, each item stored under its name after its parent's: this is how
/// `dconf list` and `dconf dump` walk the tree. System databases compiled by `dconf compile`
/// may also hold a nested table `.locks` naming locked keys; dconf-service never writes one.
public enum DconfDatabaseFile {
    /// The name of the nested table of locked keys in a dconf database.
    public static let locksTableName = ".locks"

    /// The file dconf-service writes for `values` (keys to values): byte for byte the file it
    /// writes when the whole content reaches it as one change on an empty database (as
    /// `dconf load /` does). Every other history gives a file that dconf reads the same;
    /// dconf-service's own bytes then depend on the order its changes came in (see
    /// ``file(inChangesetOrder:locks:)``).
    ///
    /// `locks`, when not empty, are stored in a nested `.locks` table, as `dconf compile`
    /// stores the locks of a system database; a user database has none. `annotations` are
    /// stored at the root under names that are not dconf keys (`.name`): dconf's clients never
    /// see them, and dconf-service drops them when it writes the file.
    public static func file(_ values: [String: GVDBValue], locks: Set<String> = [], annotations: [String: GVDBValue] = [:]) throws -> [UInt8] {
        var table = DconfChangesetTable()
        // dconf_changeset_change sets a change's keys in strcmp order.
        for (_, key) in values.keys.map({ (Array($0.utf8), $0) }).sorted(by: { $0.0.lexicographicallyPrecedes($1.0) }) {
            table.set(key)
        }
        let entries = try table.order.map { key in
            guard let value = values[key] else {
                throw GVDBError(.invalidInput, "“\(key)” has no value")
            }
            return (key: key, value: value)
        }
        return try file(inChangesetOrder: entries, locks: locks, annotations: annotations)
    }

    /// The file dconf-service writes when its database changeset visits `entries` in this
    /// order (the order of GLib's `GHashTable` of that changeset): each key is inserted into
    /// gvdb-builder's table followed by those of its directories not yet there, innermost
    /// first, as `dconf_gvdb_utils_write_file` does. Throws if a key is not a dconf key or is
    /// given twice.
    public static func file(
        inChangesetOrder entries: [(key: String, value: GVDBValue)], locks: Set<String> = [], annotations: [String: GVDBValue] = [:]
    ) throws -> [UInt8] {
        var table = GVDBTableBuilder()
        for (key, value) in entries {
            if let reason = DconfPath.whyNotKey(key) { throw GVDBError(.invalidInput, DconfFormatError.notAKey(key, reason: reason).description) }
            guard !table.contains(key) else {
                throw GVDBError(.invalidInput, "the key “\(key)” is given twice")
            }
            // The key first, then its missing directories from the innermost outwards.
            try table.insert(key, value: value, parent: DconfPath.parent(of: key))
            var directory = DconfPath.parent(of: key)
            while let name = directory, !table.contains(name) {
                try table.insertDirectory(name, parent: DconfPath.parent(of: name))
                directory = DconfPath.parent(of: name)
            }
        }
        if !locks.isEmpty {
            var locked = GVDBTableBuilder()
            for key in locks.sorted(by: { $0.utf8.lexicographicallyPrecedes($1.utf8) }) {
                try locked.insert(key, value: GVDBValue(typeString: "s", bytes: [0]))
            }
            try table.insert(locksTableName, table: locked)
        }
        for (name, value) in annotations.sorted(by: { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }) {
            guard name.utf8.first == UInt8(ascii: "."), !table.contains(name) else {
                throw GVDBError(.invalidInput, "“\(name)” cannot annotate a dconf database: an annotation's name starts with “.” and is given once")
            }
            try table.insert(name, value: value)
        }
        return try table.serialized()
    }

    /// Every key of the database `bytes` with its value, as dconf-service takes a database in
    /// (`dconf_gvdb_utils_changeset_from_table`: the names that are keys and hold a value).
    /// Unlike dconf, which skips what it cannot read, any damage throws: the whole file is
    /// checked first.
    public static func values(in bytes: [UInt8]) throws -> [String: GVDBValue] {
        let file = try GVDBFile(bytes: bytes)
        try file.validate()
        return try file.keyedValues().filter { DconfPath.isKey($0.key) }
    }

    /// Every key of the database `bytes` with the serialised variant its item stores (not
    /// looked into), as dconf-service finds them when it takes a database in
    /// (`dconf_gvdb_utils_changeset_from_table`: the names that are keys and hold a value),
    /// or why that value cannot be had. Unlike ``values(in:)``, the damage of one item costs
    /// that item alone, as in dconf: an item whose name cannot be built is left out, one
    /// whose value lies outside the file is given with the error. A name given twice gives
    /// its first item. Throws only when the file is no GVDB file (its header or root table)
    /// or its names nest deeper than any database holds.
    public static func storedVariants(in bytes: [UInt8]) throws -> [String: Result<ArraySlice<UInt8>, GVDBError>] {
        var variants: [String: Result<ArraySlice<UInt8>, GVDBError>] = [:]
        for (name, variant) in try GVDBFile(bytes: bytes).valueItems() where DconfPath.isKey(name) && variants[name] == nil {
            variants[name] = variant
        }
        return variants
    }

    /// The keys locked by the database `bytes` (the names in its `.locks` table).
    public static func locks(in bytes: [UInt8]) throws -> Set<String> {
        guard let locks = try GVDBFile(bytes: bytes).table(forKey: locksTableName) else { return [] }
        return Set(try locks.names())
    }
}

/// The order of dconf-service's database changeset (a `GHashTable` of keys): keys set in
/// turn, and the copy dconf-service makes of it at the start of each change
/// (`dconf_changeset_new_database`), which re-inserts the keys in visiting order.
struct DconfChangesetTable {
    private var hashes = GLibHashOrder()
    private var keys: [String] = []
    private var present: Set<String> = []

    /// Sets `key` (a key already present keeps its place, as `g_hash_table_insert` keeps it).
    mutating func set(_ key: String) {
        guard present.insert(key).inserted else { return }
        hashes.insert(hash: djbHash(key), id: keys.count)
        keys.append(key)
    }

    /// The keys in visiting order.
    var order: [String] { hashes.order.map { keys[$0] } }

    /// A fresh table holding the same keys, inserted in visiting order.
    func copied() -> DconfChangesetTable {
        var copy = DconfChangesetTable()
        for key in order { copy.set(key) }
        return copy
    }
}
