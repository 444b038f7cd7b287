import CGIO

/// An installed GSettings schema: its id, its path (none for a relocatable schema) and
/// its keys, read through `g_settings_schema_*`.
///
/// `@unchecked Sendable`: every stored property is a constant, and the one that is not a
/// Swift value, the `GSettingsSchema` handle, is an immutable GLib object whose reference
/// count is atomic; GLib's schema functions only read it, from any thread.
public final class Schema: @unchecked Sendable {
    /// The schema id (`org.gnome.desktop.interface`).
    public let id: String
    /// Its fixed path (`/org/gnome/desktop/interface/`), `nil` when it is relocatable.
    public let path: String?
    /// Its keys, sorted by name.
    public let keys: [SchemaKey]
    /// Its keys by name.
    public let keysByName: [String: SchemaKey]
    /// The `GSettingsSchema`, for GSettings objects of it (``StoredSettings``).
    let handle: OpaquePointer

    convenience init?(source: OpaquePointer, id: String) {
        guard let schema = g_settings_schema_source_lookup(source, id, 1) else { return nil }
        self.init(handle: schema)
    }

    /// The schema of `handle`, a reference this object takes over.
    init(handle schema: OpaquePointer) {
        handle = schema
        id = String(cString: g_settings_schema_get_id(schema))
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
        self.keys = keys.sorted { $0.name.utf8.lexicographicallyPrecedes($1.name.utf8) }
        keysByName = Dictionary(keys.map { ($0.name, $0) }, uniquingKeysWith: { first, _ in first })
    }

    deinit {
        g_settings_schema_unref(handle)
    }

    /// Whether the schema has no path of its own: it is used at paths its users choose.
    public var isRelocatable: Bool { path == nil }

    /// The names of its keys in byte order, as `gsettings list-keys` prints them.
    public var keyNames: [String] { keys.map(\.name) }
}
