import CGIO
import GVariantCoding
import GVariantMapping
import PreferencesModel

/// One key of an installed GSettings schema, as `g_settings_schema_key_*` describes it:
/// its type, summary and description (translated through the schema's gettext domain by
/// GLib), default, and the values it allows; and the conversions between what a person
/// types, what prefsd stores (through ``VariantCoding``, exactly as the GSettings module
/// stores it) and what is shown.
///
/// `@unchecked Sendable`: every stored property is a constant, and the one that is not a
/// Swift value, the `GSettingsSchemaKey` handle, is an immutable GLib object whose reference
/// count is atomic; GLib's schema functions only read it, from any thread.
public final class SchemaKey: @unchecked Sendable {
    // @unchecked: the GSettingsSchemaKey is immutable once loaded and GLib's reference
    // counting is atomic; every property here is a `let`.

    /// What values a key takes besides its type.
    public enum Choices: Sendable, Equatable {
        /// Any value of the type.
        case any
        /// One of these nicks (an enum key, stored as a string).
        case enumeration([String])
        /// Any set of these nicks (a flags key, stored as an array of strings).
        case flags([String])
        /// A number from `minimum` to `maximum`, both included; the texts as GVariant prints them.
        case range(minimum: Double, maximum: Double, minimumText: String, maximumText: String)
    }

    /// The key's name (`gtk-theme`).
    public let name: String
    /// Its GVariant type string (`s`, `as`, `(dd)`).
    public let type: String
    /// The one-line summary, translated where the schema is; `nil` when it has none.
    public let summary: String?
    /// The longer description, translated where the schema is; `nil` when it has none.
    public let description: String?
    /// What values it allows besides its type.
    public let choices: Choices
    /// The default, as prefsd would store it.
    public let defaultValue: PropertyListValue
    /// The default as text, arrays and dictionaries one item per line.
    public let defaultText: String

    /// The `GSettingsSchemaKey`.
    let handle: OpaquePointer

    init?(schema: OpaquePointer, name: String) {
        guard let key = g_settings_schema_get_key(schema, name) else { return nil }
        handle = key
        self.name = name
        guard let typeText = g_variant_type_dup_string(g_settings_schema_key_get_value_type(key)) else { return nil }
        type = String(cString: typeText)
        g_free(typeText)
        summary = g_settings_schema_key_get_summary(key).map { String(cString: $0) }
        description = g_settings_schema_key_get_description(key).map { String(cString: $0) }
        choices = Self.choices(of: key)
        guard let defaultVariant = g_settings_schema_key_get_default_value(key) else { return nil }
        defer { g_variant_unref(defaultVariant) }
        defaultValue = VariantCoding.propertyList(from: defaultVariant)
        defaultText = SchemaText.listed(defaultVariant)
    }

    deinit {
        g_settings_schema_key_unref(handle)
    }

    /// The value GSettings reads for `stored` (the key's stored prefsd value, `nil` when
    /// unset): `stored` when it fits the key's type and range, else the default.
    public func effectiveValue(_ stored: PropertyListValue?) -> PropertyListValue {
        guard let stored, let variant = readable(stored) else { return defaultValue }
        g_variant_unref(variant)
        return stored
    }

    /// Whether `stored` is what GSettings reads (it fits); `false` for `nil`.
    public func reads(_ stored: PropertyListValue?) -> Bool {
        guard let stored, let variant = readable(stored) else { return false }
        g_variant_unref(variant)
        return true
    }

    /// The text of the value GSettings reads for `stored`, as ``defaultText`` is written.
    public func text(_ stored: PropertyListValue?) -> String {
        guard let stored, let variant = readable(stored) else { return defaultText }
        defer { g_variant_unref(variant) }
        return SchemaText.listed(variant)
    }

    /// The value to store for `text`, GVariant text of the key's type (as `gsettings set`
    /// takes it; line breaks allowed), checked against the key's choices or range.
    /// - Throws: ``SchemaError`` saying what is wrong.
    public func value(parsing text: String) throws(SchemaError) -> PropertyListValue {
        let variant: OpaquePointer
        do {
            variant = try VariantText.parse(text, type: type)
        } catch {
            throw .unparsable(key: name, type: type, detail: error.detail)
        }
        defer { g_variant_unref(variant) }
        guard g_settings_schema_key_range_check(handle, variant) != 0 else {
            throw .outOfRange(key: name, allowed: allowedDescription)
        }
        return VariantCoding.propertyList(from: variant)
    }

    /// The value to store for the string `text` (a key of type `s`), checked against the
    /// key's choices.
    public func value(string text: String) throws(SchemaError) -> PropertyListValue {
        try value(parsing: SchemaText.quoted(text))
    }

    /// The value to store for the enum nick `nick`.
    public func value(nick: String) throws(SchemaError) -> PropertyListValue {
        try value(parsing: SchemaText.quoted(nick))
    }

    /// The value to store for the set of flag nicks `nicks`.
    public func value(flags nicks: [String]) throws(SchemaError) -> PropertyListValue {
        try value(parsing: "@as [" + nicks.map(SchemaText.quoted).joined(separator: ", ") + "]")
    }

    /// The nick GSettings reads for `stored` (an enum key).
    public func nick(_ stored: PropertyListValue?) -> String? {
        if case .string(let nick) = effectiveValue(stored) { return nick }
        return nil
    }

    /// The flag nicks GSettings reads for `stored` (a flags key).
    public func flags(_ stored: PropertyListValue?) -> [String] {
        guard case .array(let items) = effectiveValue(stored) else { return [] }
        return items.compactMap { if case .string(let nick) = $0 { nick } else { nil } }
    }

    /// The number GSettings reads for `stored` (a number key).
    public func number(_ stored: PropertyListValue?) -> Double? {
        switch effectiveValue(stored) {
        case .integer(let number): Double(number)
        case .real(let number): number
        default: nil
        }
    }

    /// What the key allows, as the end of a sentence (`a number from 100 to 2500`).
    public var allowedDescription: String { Self.allowed(choices, type: type) }

    /// What a key of `type` with `choices` allows, as the end of a sentence.
    static func allowed(_ choices: Choices, type: String) -> String {
        switch choices {
        case .any: "a GVariant of type \(type)"
        case .enumeration(let nicks): "one of " + nicks.joined(separator: ", ")
        case .flags(let nicks): "a list of " + nicks.joined(separator: ", ")
        case .range(_, _, let low, let high): "a number from \(low) to \(high)"
        }
    }

    /// A new reference to the GVariant GSettings reads for `stored`, or `nil` when it
    /// does not fit the type or the range (GSettings then reads the default).
    private func readable(_ stored: PropertyListValue) -> OpaquePointer? {
        guard let variant = VariantCoding.variant(from: stored, type: type) else { return nil }
        guard g_settings_schema_key_range_check(handle, variant) != 0 else {
            g_variant_unref(variant)
            return nil
        }
        return variant
    }

    /// The choices of the `GSettingsSchemaKey` `key`.
    static func choices(of key: OpaquePointer) -> Choices {
        guard let range = g_settings_schema_key_get_range(key) else { return .any }
        defer { g_variant_unref(range) }
        // (sv): the kind ("type", "enum", "flags", "range") and its detail.
        guard let kindVariant = g_variant_get_child_value(range, 0), let boxed = g_variant_get_child_value(range, 1) else { return .any }
        let kind = String(cString: g_variant_get_string(kindVariant, nil))
        g_variant_unref(kindVariant)
        let detail = g_variant_get_variant(boxed)
        g_variant_unref(boxed)
        guard let detail else { return .any }
        defer { g_variant_unref(detail) }
        switch kind {
        case "enum": return .enumeration(SchemaText.strings(detail))
        case "flags": return .flags(SchemaText.strings(detail))
        case "range":
            guard let low = g_variant_get_child_value(detail, 0), let high = g_variant_get_child_value(detail, 1) else { return .any }
            defer {
                g_variant_unref(low)
                g_variant_unref(high)
            }
            return .range(
                minimum: SchemaText.number(low), maximum: SchemaText.number(high),
                minimumText: SchemaText.plain(low), maximumText: SchemaText.plain(high))
        default: return .any
        }
    }
}
