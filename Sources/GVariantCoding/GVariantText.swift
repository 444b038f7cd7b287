import CGLib
import GVariantMapping
import PreferencesModel

/// GVariant text (as `dconf dump` prints it and `dconf load` reads it) to and from the values
/// the GSettings module stores in prefsd, through ``VariantCoding``.
public enum GVariantText {
    /// The prefsd value the GSettings module stores for the GVariant `text` (type annotated
    /// where GVariant needs it, `uint32 600`, as `dconf dump` prints it) of the key `key`,
    /// and the GVariant type the text has.
    /// - Throws: ``GVariantCodingError/unparsable(key:detail:)`` with GLib's reason.
    public static func storedValue(parsing text: String, key: String) throws(GVariantCodingError) -> (value: PropertyListValue, type: String) {
        let variant: OpaquePointer
        do {
            variant = try VariantText.parse(text)
        } catch {
            throw .unparsable(key: key, detail: error.detail)
        }
        defer { g_variant_unref(variant) }
        return (VariantCoding.propertyList(from: variant), String(cString: g_variant_get_type_string(variant)))
    }

    /// The GVariant text, type annotated as `dconf dump` prints it, of `value` read as a
    /// `type` the way the GSettings module reads it; `nil` when the value does not fit the
    /// type (GSettings would answer the schema default).
    public static func text(for value: PropertyListValue, type: String) -> String? {
        guard g_variant_type_string_is_valid(type) != 0, let variant = VariantCoding.variant(from: value, type: type) else { return nil }
        defer { g_variant_unref(variant) }
        return VariantText.print(variant, annotated: true)
    }
}
