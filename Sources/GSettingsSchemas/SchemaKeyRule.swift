import CGIO
import GVariantCoding
import GVariantMapping
import PreferencesModel

/// One key of an installed schema as values written to it are judged: its schema, name and
/// GVariant type, and GLib's own check of its range and choices. Lighter than ``SchemaKey``
/// (no summary, description or default is read): the service holds one for every key of
/// every installed schema.
///
/// `@unchecked Sendable`: every stored property is a constant, and the one that is not a
/// Swift value, the `GSettingsSchemaKey` handle, is an immutable GLib object whose reference
/// count is atomic; GLib's schema functions only read it, from any thread.
public final class SchemaKeyRule: @unchecked Sendable {
    /// The schema's id (`org.gnome.desktop.session`).
    public let schema: String
    /// The key's name (`idle-delay`).
    public let name: String
    /// Its GVariant type string (`u`).
    public let type: String
    /// The `GSettingsSchemaKey`, a reference this object owns.
    private let handle: OpaquePointer

    /// The key `name` of the `GSettingsSchema` `schemaHandle`, whose id is `schema`.
    init?(schemaHandle: OpaquePointer, schema: String, name: String) {
        guard let key = g_settings_schema_get_key(schemaHandle, name) else { return nil }
        guard let typeText = g_variant_type_dup_string(g_settings_schema_key_get_value_type(key)) else {
            g_settings_schema_key_unref(key)
            return nil
        }
        handle = key
        type = String(cString: typeText)
        g_free(typeText)
        self.schema = schema
        self.name = name
    }

    deinit {
        g_settings_schema_key_unref(handle)
    }

    /// Whether the key holds the prefsd value `value`: it is a GVariant of the key's type
    /// as GSettings reads a stored value (``VariantCoding``), and the schema's range or
    /// choices take it.
    public func holds(_ value: PropertyListValue) -> Bool {
        guard let variant = VariantCoding.variant(from: value, type: type) else { return false }
        defer { g_variant_unref(variant) }
        return g_settings_schema_key_range_check(handle, variant) != 0
    }

    /// Why the key does not hold `value`, written as `given` (its text as the writer gave it),
    /// the key named `key` as the writer named it; `nil` when it holds it.
    /// - Parameter exactType: the GVariant type the writer gave the value, when it gave one
    ///   (dconf's `Change`): another type than the key's is refused, not converted.
    public func refusal(of value: PropertyListValue, exactType: String? = nil, key: String, given: String) -> SchemaError? {
        let fits = holds(value)
        if fits && (exactType == nil || exactType == type) { return nil }
        let choices = SchemaKey.choices(of: handle)
        let allowed = choices == .any ? "" : SchemaKey.allowed(choices, type: type)
        let suggestion = fits ? text(of: value) ?? "" : ""
        // A value of another type is named with its type: GVariant text leaves out the
        // common ones (`70` is an int32).
        let named = exactType.map { "\(given) (\(KeyfileCheck.typeName($0)))" } ?? given
        return .notHeld(key: key, schema: schema, type: type, allowed: allowed, given: named, suggestion: suggestion)
    }

    /// `value` as GVariant text of the key's type, with the annotations it needs
    /// (`uint32 600`), as `dconf write` takes it; `nil` when it is not of the key's type.
    public func text(of value: PropertyListValue) -> String? {
        guard let variant = VariantCoding.variant(from: value, type: type) else { return nil }
        defer { g_variant_unref(variant) }
        return VariantText.print(variant, annotated: true)
    }
}
