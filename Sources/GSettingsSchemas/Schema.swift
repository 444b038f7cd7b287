import CGIO

/// An installed GSettings schema: its id, its path (none for a relocatable schema) and
/// its keys, read through `g_settings_schema_*`.
public final class Schema: Sendable {
    /// The schema id (`org.gnome.desktop.interface`).
    public let id: String
    /// Its fixed path (`/org/gnome/desktop/interface/`), `nil` when it is relocatable.
    public let path: String?
    /// Its keys, sorted by name.
    public let keys: [SchemaKey]
    /// Its keys by name.
    public let keysByName: [String: SchemaKey]

    init?(source: OpaquePointer, id: String) {
        guard let schema = g_settings_schema_source_lookup(source, id, 1) else { return nil }
        defer { g_settings_schema_unref(schema) }
        self.id = id
        path = g_settings_schema_get_path(schema).map { String(cString: $0) }
        var keys: [SchemaKey] = []
        if let names = g_settings_schema_list_keys(schema) {
            var index = 0
            while let name = names[index] {
                index += 1
                if let key = SchemaKey(schema: schema, name: String(cString: name)) { keys.append(key) }
            }
            g_strfreev(names)
        }
        self.keys = keys.sorted { $0.name < $1.name }
        keysByName = Dictionary(keys.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }
}
