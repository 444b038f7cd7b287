import DconfFormats
import GSettingsPaths
import GVDB
import PreferencesModel

/// dconf's user database as prefsd keeps it: a mirror of the store, holding every stored
/// key the GSettings path rule maps (the rule run backwards: `interface/gtk-theme` of
/// `org.gnome.desktop` is `/org/gnome/desktop/interface/gtk-theme`), each value of the
/// GVariant type it was last written with through dconf, else of its natural type
/// (``DconfValue/naturalType(of:)``).
public enum DconfMirror {
    /// The dconf key of `key` in `domain`, or `nil` when GSettings and dconf never see it
    /// (the path rule does not give this domain and key back).
    public static func path(domain: DomainName, key: String) -> String? {
        GSettingsPath(domain: domain.rawValue, key: key)?.settingsKey
    }

    /// The values of the database for `domains` (each domain's stored keys and values) and
    /// `types` (the GVariant types keys were written with through dconf), by dconf key.
    public static func values(
        of domains: [DomainName: [String: PropertyListValue]], types: [DomainName: [String: String]]
    ) -> [String: DconfValue] {
        var values: [String: DconfValue] = [:]
        for (domain, entries) in domains {
            let given = types[domain] ?? [:]
            for (key, stored) in entries {
                guard let path = path(domain: domain, key: key) else { continue }
                values[path] = DconfValue(storedValue: stored, writtenAs: given[key])
            }
        }
        return values
    }

    /// The name of the mark prefsd leaves in the files it writes (not a dconf key, so no
    /// dconf client sees it; its value is a ``Mark``, naming the store); dconf-service drops
    /// it when it writes the file itself. A file without it, or with another store's, was
    /// written by someone else, and holds values to take in.
    public static let markName = ".prefsd-mirror"

    /// The database file of `values`, with prefsd's `mark`: every key and the directories
    /// above it, as dconf reads dconf-service's file, though not byte for byte as
    /// dconf-service lays it out (see ``DconfDatabaseBuilder``).
    /// - Throws: `GVDBError` when a value cannot be stored in GVDB.
    public static func file(_ values: [String: DconfValue], mark: Mark = Mark(store: nil)) throws -> [UInt8] {
        var database = DconfMirrorDatabase(mark: mark)
        for (path, value) in values { try database.set(path, to: value) }
        return try database.file()
    }

    /// Whether the database file `bytes` carries a mark of prefsd's (of any store).
    public static func isMirror(_ bytes: [UInt8]) -> Bool {
        Mark(inFile: bytes) != nil
    }

    /// The values of the database file `bytes`.
    /// - Throws: `GVDBError` when the file is damaged.
    public static func values(inFile bytes: [UInt8]) throws -> [String: DconfValue] {
        try DconfDatabaseFile.values(in: bytes).mapValues(DconfValue.init)
    }

    /// What dconf reads of the database file `bytes`, as dconf-service takes a database in:
    /// every key holding a value, the value as GLib reads it (``DconfValue/init(storedVariant:)``),
    /// and, by key, why a value could not be read at all (it lies outside the file). One
    /// damaged item costs that item alone.
    /// - Throws: `GVDBError` when the file is no GVDB database (its header or root table).
    public static func readableValues(inFile bytes: [UInt8]) throws -> (values: [String: DconfValue], unreadable: [String: String]) {
        var values: [String: DconfValue] = [:]
        var unreadable: [String: String] = [:]
        for (path, variant) in try DconfDatabaseFile.storedVariants(in: bytes) {
            switch variant {
            case .success(let stored): values[path] = DconfValue(storedVariant: stored)
            case .failure(let error): unreadable[path] = error.message
            }
        }
        return (values, unreadable)
    }
}
