import CGIO

/// What the installed GSettings schemas (GLib's default source, `GSETTINGS_SCHEMA_DIR`
/// included) declare.
public enum InstalledSchemas {
    /// The GVariant type of every key of every schema that has a fixed path, by full key
    /// (`/org/gnome/desktop/interface/cursor-size` → `i`). Relocatable schemas have no
    /// path of their own and are not included.
    public static func keyTypes() -> [String: String] {
        guard let source = g_settings_schema_source_get_default() else { return [:] }
        var fixed: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        var relocatable: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        g_settings_schema_source_list_schemas(source, 1, &fixed, &relocatable)
        defer {
            g_strfreev(fixed)
            g_strfreev(relocatable)
        }
        var types: [String: String] = [:]
        var index = 0
        while let id = fixed?[index] {
            index += 1
            guard let schema = g_settings_schema_source_lookup(source, id, 1) else { continue }
            defer { g_settings_schema_unref(schema) }
            guard let pathPointer = g_settings_schema_get_path(schema) else { continue }
            let path = String(cString: pathPointer)
            guard let names = g_settings_schema_list_keys(schema) else { continue }
            defer { g_strfreev(names) }
            var keyIndex = 0
            while let name = names[keyIndex] {
                keyIndex += 1
                guard let key = g_settings_schema_get_key(schema, name) else { continue }
                defer { g_settings_schema_key_unref(key) }
                guard let type = g_variant_type_dup_string(g_settings_schema_key_get_value_type(key)) else { continue }
                defer { g_free(type) }
                types[path + String(cString: name)] = String(cString: type)
            }
        }
        return types
    }
}
