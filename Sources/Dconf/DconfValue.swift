import CGLib
import GVDB
import GVariantCoding
import GVariantMapping
import PreferencesModel

/// A value as dconf holds it, a GVariant of any type, and the value prefsd stores for it:
/// the GSettings module's mapping (``VariantCoding``) gives the stored value, and the GVariant
/// type the value was written with gives it back exactly.
public struct DconfValue: Sendable, Hashable {
    /// The GVariant type string (`i`, `as`, `a{sv}`, …).
    public let type: String
    /// The serialised GVariant in normal form, as dconf's database file holds it.
    public let bytes: [UInt8]

    /// The value of the GVariant `variant` (borrowed), in normal form.
    init(variant: OpaquePointer) {
        let normal = g_variant_get_normal_form(variant)!
        defer { g_variant_unref(normal) }
        type = String(cString: g_variant_get_type_string(normal))
        let size = Int(g_variant_get_size(normal))
        bytes = size == 0 ? [] : Array(UnsafeRawBufferPointer(start: g_variant_get_data(normal), count: size))
    }

    /// A value as a dconf database file holds it.
    public init(_ value: GVDBValue) {
        type = value.typeString
        bytes = value.bytes
    }

    /// The value dconf's clients read from a database item that stores the serialised
    /// variant `variant` (`v`): GLib's reading of it, in normal form, whatever the bytes
    /// hold. As in GLib, a type string that names no type, or a value of a fixed-size type
    /// with another size, reads as the unit `()`, and a string that is not UTF-8 as the empty
    /// string.
    public init(storedVariant variant: ArraySlice<UInt8>) {
        let data = variant.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(data) }
        let outer = "v".withCString { g_variant_ref_sink(g_variant_new_from_bytes(OpaquePointer($0), data, 0))! }
        defer { g_variant_unref(outer) }
        let inner = g_variant_get_variant(outer)!
        defer { g_variant_unref(inner) }
        self.init(variant: inner)
    }

    /// The stored value for `value` read as a GVariant of `type`, or `nil` when it does not
    /// fit the type; `type` `nil` gives the value's own GVariant (see ``naturalType(of:)``).
    public init?(storedValue value: PropertyListValue, type: String?) {
        let type = type ?? Self.naturalType(of: value)
        guard g_variant_type_string_is_valid(type) != 0, let variant = VariantCoding.variant(from: value, type: type) else { return nil }
        defer { g_variant_unref(variant) }
        self.init(variant: variant)
    }

    /// The value dconf's clients read for the stored `value`: of `writtenAs` (the GVariant
    /// type it was last given through dconf) while the value still fits it, else of its
    /// natural type (``naturalType(of:)``); `nil` when neither fits.
    public init?(storedValue value: PropertyListValue, writtenAs type: String?) {
        guard let fitting = type.flatMap({ Self(storedValue: value, type: $0) }) ?? Self(storedValue: value, type: nil) else { return nil }
        self = fitting
    }

    /// The value prefsd stores: what the GSettings module stores for the same GVariant.
    public var storedValue: PropertyListValue {
        withVariant { VariantCoding.propertyList(from: $0) }
    }

    /// The value as a GVDB file entry.
    /// - Throws: `GVDBError` when the type is not one GVDB can hold.
    public func gvdbValue() throws -> GVDBValue {
        try GVDBValue(typeString: type, bytes: bytes)
    }

    /// GVariant's text form of the value (`uint32 600`, `['a', 'b']`), as `dconf read` prints it.
    public var text: String {
        withVariant { VariantText.print($0, annotated: true) }
    }

    /// Runs `body` with a GVariant of the value, valid during the call.
    func withVariant<T>(_ body: (OpaquePointer) -> T) -> T {
        let data = bytes.withUnsafeBytes { g_bytes_new($0.baseAddress, gsize($0.count)) }
        defer { g_bytes_unref(data) }
        let variant = type.withCString { g_variant_take_ref(g_variant_new_from_bytes(OpaquePointer($0), data, 0))! }
        defer { g_variant_unref(variant) }
        return body(variant)
    }

    /// The GVariant type to keep beside `stored`, the value prefsd stores for a value written
    /// as a `type`: `nil` when `stored` reads back as that type anyway (its natural type),
    /// else `type`.
    public static func typeToKeep(_ type: String, storing stored: PropertyListValue) -> String? {
        type == naturalType(of: stored) ? nil : type
    }

    /// The GVariant type a stored value reads back as when no type was ever given for it:
    /// the type of its tagged text (`@(ii) (1, 2)` is a `(ii)`), else the canonical type of
    /// its shape (`s x d b ay (d) av a{sv}`).
    public static func naturalType(of value: PropertyListValue) -> String {
        switch value {
        case .string(let text):
            guard text.utf8.first == UInt8(ascii: "@"), let space = text.firstIndex(of: " ") else { return "s" }
            let tag = String(text[text.index(after: text.startIndex)..<space])
            return g_variant_type_string_is_valid(tag) != 0 ? tag : "s"
        case .integer: return "x"
        case .real: return "d"
        case .boolean: return "b"
        case .data: return "ay"
        case .date: return "(d)"
        case .array: return "av"
        case .dictionary: return "a{sv}"
        }
    }
}
