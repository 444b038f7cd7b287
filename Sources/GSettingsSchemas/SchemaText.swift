import CGIO
import GVariantMapping

/// GVariant text as the schema pages show it: GLib's own printing (``VariantText``), with
/// arrays and dictionaries one item per line so they read as lists (and parse back unchanged).
enum SchemaText {
    /// `variant` printed; a non-empty array or dictionary (other than a byte string) as
    /// `[` / one item per line, each followed by `,` but the last / `]`.
    static func listed(_ variant: OpaquePointer) -> String {
        let type = String(cString: g_variant_get_type_string(variant))
        guard type.hasPrefix("a"), type != "ay", g_variant_n_children(variant) > 0 else { return annotated(variant) }
        let count = Int(g_variant_n_children(variant))
        let isDictionary = type.hasPrefix("a{")
        var lines: [String] = []
        for index in 0..<count {
            guard let child = g_variant_get_child_value(variant, gsize(index)) else { continue }
            defer { g_variant_unref(child) }
            if isDictionary, let key = g_variant_get_child_value(child, 0), let value = g_variant_get_child_value(child, 1) {
                lines.append("  " + plain(key) + ": " + plain(value))
                g_variant_unref(key)
                g_variant_unref(value)
            } else {
                lines.append("  " + plain(child))
            }
        }
        let (open, close) = isDictionary ? ("{", "}") : ("[", "]")
        return open + "\n" + lines.joined(separator: ",\n") + "\n" + close
    }

    /// GLib's text with type annotations where GVariant needs them (`uint32 5`, `@as []`).
    static func annotated(_ variant: OpaquePointer) -> String {
        VariantText.print(variant, annotated: true)
    }

    /// GLib's text without type annotations (parsed back against a known type).
    static func plain(_ variant: OpaquePointer) -> String {
        VariantText.print(variant, annotated: false)
    }

    /// `text` as a GVariant string literal (`'it\'s'`).
    static func quoted(_ text: String) -> String {
        guard let made = g_variant_new_string(text), let variant = g_variant_take_ref(made) else { return "''" }
        defer { g_variant_unref(variant) }
        return plain(variant)
    }

    /// The strings of an `as`.
    static func strings(_ variant: OpaquePointer) -> [String] {
        (0..<Int(g_variant_n_children(variant))).compactMap { index in
            guard let child = g_variant_get_child_value(variant, gsize(index)) else { return nil }
            defer { g_variant_unref(child) }
            return String(cString: g_variant_get_string(child, nil))
        }
    }

    /// A number variant (any integer type or a double) as a double.
    static func number(_ variant: OpaquePointer) -> Double {
        switch String(cString: g_variant_get_type_string(variant)) {
        case "y": Double(g_variant_get_byte(variant))
        case "n": Double(g_variant_get_int16(variant))
        case "q": Double(g_variant_get_uint16(variant))
        case "i": Double(g_variant_get_int32(variant))
        case "u": Double(g_variant_get_uint32(variant))
        case "x": Double(g_variant_get_int64(variant))
        case "t": Double(g_variant_get_uint64(variant))
        case "d": g_variant_get_double(variant)
        default: .nan
        }
    }
}
