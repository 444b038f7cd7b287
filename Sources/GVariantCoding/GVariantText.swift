import CGIO
import PreferencesModel

/// GVariant text (as `dconf dump` prints it and `dconf load` reads it) to and from the values
/// the GSettings module stores in prefsd, through ``VariantCoding``.
public enum GVariantText {
    /// The prefsd value the GSettings module stores for the GVariant `text` (type annotated
    /// where GVariant needs it, `uint32 600`, as `dconf dump` prints it) of the key `key`,
    /// and the GVariant type the text has.
    /// - Throws: ``GVariantCodingError/unparsable(key:detail:)`` with GLib's reason.
    public static func storedValue(parsing text: String, key: String) throws(GVariantCodingError) -> (value: PropertyListValue, type: String) {
        var error: UnsafeMutablePointer<GError>?
        guard let parsed = g_variant_parse(nil, text, nil, nil, &error), let variant = g_variant_take_ref(parsed) else {
            let detail = error.map { String(cString: $0.pointee.message) } ?? "GLib gave no reason"
            if let error { g_error_free(error) }
            throw .unparsable(key: key, detail: detail)
        }
        defer { g_variant_unref(variant) }
        return (VariantCoding.propertyList(from: variant), String(cString: g_variant_get_type_string(variant)))
    }

    /// The GVariant text, type annotated as `dconf dump` prints it, of `value` read as a
    /// `type` the way the GSettings module reads it; `nil` when the value does not fit the
    /// type (GSettings would answer the schema default).
    public static func text(for value: PropertyListValue, type: String) -> String? {
        guard g_variant_type_string_is_valid(type) != 0,
            let made = VariantCoding.variant(from: value, type: type),
            let variant = g_variant_take_ref(made)
        else { return nil }
        defer { g_variant_unref(variant) }
        guard let printed = g_variant_print(variant, 1) else { return nil }
        defer { g_free(printed) }
        return String(cString: printed)
    }
}
