import CGIO
import GVariantMapping

/// A key read and written as `gsettings` does: the value text `gsettings set` takes, and
/// what `gsettings range` and `gsettings describe` print.
extension SchemaKey {
    /// The value of `text`, GVariant text of the key's type, read as `gsettings set` reads
    /// it: for a string key, text that does not parse and does not start with a quote is the
    /// string itself (`Adwaita` is `'Adwaita'`); the value must lie in the key's range.
    /// - Throws: ``SchemaError/unparsableText(key:context:)`` with GLib's message and the
    ///   text marked where it fails, ``SchemaError/outOfRange(key:allowed:)``.
    public func value(parsingCommandLine text: String) throws(SchemaError) -> SchemaValue {
        let type = g_settings_schema_key_get_value_type(handle)
        var error: UnsafeMutablePointer<GError>?
        var parsed = g_variant_parse(type, text, nil, nil, &error)
        if parsed == nil, self.type == "s", !text.hasPrefix("'"), !text.hasPrefix("\"") {
            g_clear_error(&error)
            parsed = g_variant_new_string(text)
        }
        guard let parsed else {
            let context = error.flatMap { g_variant_parse_error_print_context($0, text) }
            defer { g_free(context) }
            if let error { g_error_free(error) }
            throw .unparsableText(key: name, context: context.map { String(cString: $0) } ?? "")
        }
        let value = SchemaValue(taking: parsed)
        guard g_settings_schema_key_range_check(handle, value.variant) != 0 else {
            throw .outOfRange(key: name, allowed: allowedDescription)
        }
        return value
    }

    /// The value GVariant text `text` gives when read as the key's type, if the key takes
    /// it: `60` is `uint32 60` for a `u` key, `Adwaita` the string `'Adwaita'` for an `s`
    /// key (as `gsettings set` reads it). `nil` when the text is not of the key's type or
    /// lies outside its range.
    public func valueOfItsType(_ text: String) -> SchemaValue? {
        try? value(parsingCommandLine: text)
    }

    /// What `gsettings range` prints for the key: `type T`, `range T MIN MAX`, or `enum` or
    /// `flags` then each nick quoted, one a line (every line ending in a line feed).
    public var rangeText: String {
        guard let range = g_settings_schema_key_get_range(handle) else { return "" }
        defer { g_variant_unref(range) }
        let kind = VariantMapping.withChild(range, 0) { String(cString: g_variant_get_string($0, nil)) }
        let detail = VariantMapping.withChild(range, 1) { g_variant_get_variant($0)! }
        defer { g_variant_unref(detail) }
        switch kind {
        case "type":
            return "type " + String(String(cString: g_variant_get_type_string(detail)).dropFirst()) + "\n"
        case "range":
            let low = VariantMapping.withChild(detail, 0) { (String(cString: g_variant_get_type_string($0)), VariantText.print($0, annotated: false)) }
            let high = VariantMapping.withChild(detail, 1) { VariantText.print($0, annotated: false) }
            return "range \(low.0) \(low.1) \(high)\n"
        case "enum", "flags":
            let items = (0..<Int(g_variant_n_children(detail))).map { index in
                VariantMapping.withChild(detail, index) { VariantText.print($0, annotated: false) + "\n" }
            }
            return kind + "\n" + items.joined()
        default:
            return ""
        }
    }

    /// What `gsettings describe` prints for the key: its description, else its summary,
    /// else `(null)` as GLib prints a missing text.
    public var describeText: String {
        (description ?? summary ?? "(null)") + "\n"
    }
}
