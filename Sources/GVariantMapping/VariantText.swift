import CGLib

/// GVariant's text form (`uint32 600`, `@as []`, `('xkb', 'us')`), printed and parsed by
/// GLib (`g_variant_print`, `g_variant_parse`): the one place either is called, for the
/// mapping's tagged text, `dconf dump` keyfiles and the schema pages alike.
public enum VariantText {
    /// Why a text is not a GVariant (of the type asked for).
    public struct ParseError: Error, Sendable, Equatable {
        /// GLib's reason (it names the offending part of the text), or that the type asked
        /// for is not a GVariant type.
        public let detail: String

        /// An error with `detail`.
        public init(detail: String) {
            self.detail = detail
        }
    }

    /// `variant` as GVariant text; `annotated`: with the type annotations GVariant needs to
    /// read the text back without knowing its type (`uint32 5`, `@as []`), as `dconf dump`
    /// prints; without them the text parses back only against the type.
    public static func print(_ variant: OpaquePointer, annotated: Bool) -> String {
        guard let printed = g_variant_print(variant, annotated ? 1 : 0) else { return "" }
        defer { g_free(printed) }
        return String(cString: printed)
    }

    /// A new reference (never floating) to the GVariant `text` describes, read as a `type`
    /// (a GVariant type string) when one is given, else as the text itself says.
    /// - Throws: ``ParseError`` with GLib's reason.
    public static func parse(_ text: String, type: String? = nil) throws(ParseError) -> OpaquePointer {
        var variantType: OpaquePointer?
        if let type {
            guard g_variant_type_string_is_valid(type) != 0, let made = g_variant_type_new(type) else {
                throw ParseError(detail: type + " is not a GVariant type")
            }
            variantType = made
        }
        defer { if let variantType { g_variant_type_free(variantType) } }
        var error: UnsafeMutablePointer<GError>?
        guard let parsed = g_variant_parse(variantType, text, nil, nil, &error) else {
            let detail = error.map { String(cString: $0.pointee.message) } ?? "GLib gave no reason"
            if let error { g_error_free(error) }
            throw ParseError(detail: detail)
        }
        return g_variant_take_ref(parsed)
    }
}
