import CGIO
import GVariantMapping

/// One GSettings object of ``StoredSettings``: a schema at a path, read as any GSettings
/// program reads it.
///
/// `@unchecked Sendable`: its GSettings object is only read (`g_settings_get_value`,
/// `g_settings_is_writable`, its children), which GLib allows from any thread; every
/// stored property is a constant.
public final class SchemaSettings: @unchecked Sendable {
    /// The schema.
    public let schema: Schema
    /// The directory its keys are at (`/org/gnome/desktop/interface/`).
    public let path: String
    private let object: UnsafeMutablePointer<GSettings>

    /// The object `object`, a reference this object takes over, of `schema`.
    init(schema: Schema, object: UnsafeMutablePointer<GSettings>) {
        self.schema = schema
        self.object = object
        let path = prefsd_settings_path(object)
        defer { g_free(path) }
        self.path = path.map { String(cString: $0) } ?? ""
    }

    deinit {
        g_object_unref(object)
    }

    /// The value GSettings reads for `key` (a key of the schema): the stored one when it
    /// fits, else the default.
    public func value(_ key: String) -> SchemaValue {
        SchemaValue(taking: g_settings_get_value(object, key))
    }

    /// Whether GSettings reads a value of the user's for `key` (not the default): one is
    /// stored, of the key's type, and the schema takes it.
    public func readsUserValue(_ key: String) -> Bool {
        guard let value = g_settings_get_user_value(object, key) else { return false }
        g_variant_unref(value)
        return true
    }

    /// Whether GSettings may change `key`.
    public func isWritable(_ key: String) -> Bool {
        g_settings_is_writable(object, key) != 0
    }

    /// The schema's children (`<child>` elements), in byte order of their names, each
    /// a GSettings object at the parent's path and the child's name, as
    /// `g_settings_get_child` makes it.
    public func children() -> [(name: String, settings: SchemaSettings)] {
        guard let names = g_settings_list_children(object) else { return [] }
        defer { g_strfreev(names) }
        var list: [String] = []
        var index = 0
        while let name = names[index] {
            list.append(String(cString: name))
            index += 1
        }
        return list.sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }.compactMap { name in
            guard let child = g_settings_get_child(object, name), let handle = prefsd_settings_schema(child) else { return nil }
            return (name, SchemaSettings(schema: Schema(handle: handle), object: child))
        }
    }
}
