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
    /// dconf client sees it); dconf-service drops it when it writes the file itself. A file
    /// without it was written by someone else, and holds values to take in.
    public static let markName = ".prefsd-mirror"

    /// The mark's value: a string "prefsd" in GVariant's serialisation (its bytes and a NUL).
    static let mark: GVDBValue? = try? GVDBValue(typeString: "s", bytes: Array("prefsd".utf8) + [0])

    /// The database file of `values`, with prefsd's mark: every key and the directories
    /// above it, as dconf reads dconf-service's file, though not byte for byte as
    /// dconf-service lays it out (see ``DconfDatabaseBuilder``).
    /// - Throws: `GVDBError` when a value cannot be stored in GVDB.
    public static func file(_ values: [String: DconfValue]) throws -> [UInt8] {
        var database = DconfMirrorDatabase()
        for (path, value) in values { try database.set(path, to: value) }
        return try database.file()
    }

    /// Whether the database file `bytes` is one prefsd wrote (it has prefsd's mark).
    public static func isMirror(_ bytes: [UInt8]) -> Bool {
        (try? GVDBFile(bytes: bytes))?.hasValue(markName) ?? false
    }

    /// The values of the database file `bytes`.
    /// - Throws: `GVDBError` when the file is damaged.
    public static func values(inFile bytes: [UInt8]) throws -> [String: DconfValue] {
        try DconfDatabaseFile.values(in: bytes).mapValues(DconfValue.init)
    }
}
