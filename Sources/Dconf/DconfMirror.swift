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
                // A type given through dconf holds while the value still fits it.
                if let value = given[key].flatMap({ DconfValue(storedValue: stored, type: $0) }) ?? DconfValue(storedValue: stored, type: nil) {
                    values[path] = value
                }
            }
        }
        return values
    }

    /// The database file of `values`, as dconf-service writes it.
    /// - Throws: `GVDBError` when a value cannot be stored in GVDB.
    public static func file(_ values: [String: DconfValue]) throws -> [UInt8] {
        var entries: [String: GVDBValue] = [:]
        for (path, value) in values { entries[path] = try value.gvdbValue() }
        return try DconfDatabaseFile.file(entries)
    }

    /// The values of the database file `bytes`.
    /// - Throws: `GVDBError` when the file is damaged.
    public static func values(inFile bytes: [UInt8]) throws -> [String: DconfValue] {
        try DconfDatabaseFile.values(in: bytes).mapValues(DconfValue.init)
    }
}
