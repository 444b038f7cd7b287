import CGLib
import Foundation
import GVariantMapping
import PreferencesModel

/// How a GSettings value (a GVariant of the type its schema declares) is stored in prefsd as
/// a property-list value, and turned back using the type GSettings expects: the one mapping,
/// ``VariantMapping`` (schema-typed GVariant ↔ wire GVariant, which the GSettings module
/// runs too, and the README's GSettings section describes), composed with the plain
/// conversion between a wire GVariant of a canonical type (`s x d b ay (d) av a{sv}`) and
/// the property-list value of the same shape.
///
/// Used by `prefs dconf-import`/`dconf-export`, the service's dconf system databases and the
/// Settings app's schema pages, so that each stores a GVariant exactly as the module does.
public enum VariantCoding {
    /// The prefsd value for `variant`. Never fails: what has no native form is tagged text.
    public static func propertyList(from variant: OpaquePointer) -> PropertyListValue {
        let wire = VariantMapping.wire(from: variant)
        defer { g_variant_unref(wire) }
        return propertyList(fromWire: wire)
    }

    /// A new reference to a GVariant of type `type` (a GVariant type string) for `value`,
    /// or `nil` when the value does not fit the type.
    public static func variant(from value: PropertyListValue, type: String) -> OpaquePointer? {
        let wire = g_variant_take_ref(wire(for: value))!
        defer { g_variant_unref(wire) }
        return VariantMapping.settingsValue(fromWire: wire, type: type)
    }

    // MARK: Property-list values and wire GVariants

    /// The property-list value of `wire`, a GVariant of a canonical type or a `v` of one.
    private static func propertyList(fromWire wire: OpaquePointer) -> PropertyListValue {
        switch String(cString: g_variant_get_type_string(wire)) {
        case "b": return .boolean(g_variant_get_boolean(wire) != 0)
        case "x": return .integer(Int64(g_variant_get_int64(wire)))
        case "d": return .real(g_variant_get_double(wire))
        case "ay":
            var count: gsize = 0
            guard let bytes = g_variant_get_fixed_array(wire, &count, 1) else { return .data(Data()) }
            return .data(Data(bytes: bytes, count: Int(count)))
        case "(d)": return .date(secondsSince1970: VariantMapping.withChild(wire, 0) { g_variant_get_double($0) })
        case "v":
            let inner = g_variant_get_variant(wire)!
            defer { g_variant_unref(inner) }
            return propertyList(fromWire: inner)
        case "av":
            return .array((0..<Int(g_variant_n_children(wire))).map { index in VariantMapping.withChild(wire, index) { propertyList(fromWire: $0) } })
        case "a{sv}":
            var dictionary: [String: PropertyListValue] = [:]
            for index in 0..<Int(g_variant_n_children(wire)) {
                VariantMapping.withChild(wire, index) { pair in
                    let key = VariantMapping.withChild(pair, 0) { String(cString: g_variant_get_string($0, nil)) }
                    dictionary[key] = VariantMapping.withChild(pair, 1) { propertyList(fromWire: $0) }
                }
            }
            return .dictionary(dictionary)
        default: return .string(String(cString: g_variant_get_string(wire, nil)))
        }
    }

    /// A new floating wire GVariant for `value`: its canonical type, a dictionary's entries
    /// sorted by key (the order prefsd reads a dictionary back in).
    private static func wire(for value: PropertyListValue) -> OpaquePointer {
        switch value {
        case .string(let text): return g_variant_new_string(text)
        case .integer(let number): return g_variant_new_int64(gint64(number))
        case .real(let number): return g_variant_new_double(number)
        case .boolean(let flag): return g_variant_new_boolean(flag ? 1 : 0)
        case .data(let bytes):
            return bytes.withUnsafeBytes { g_variant_new_fixed_array(typeY, $0.baseAddress, gsize(bytes.count), 1) }
        case .date(let seconds):
            var field: OpaquePointer? = g_variant_new_double(seconds)
            return g_variant_new_tuple(&field, 1)
        case .array(let items):
            let children: [OpaquePointer?] = items.map { g_variant_new_variant(wire(for: $0)) }
            return children.withUnsafeBufferPointer { g_variant_new_array(typeV, $0.baseAddress, gsize(children.count)) }
        case .dictionary(let entries):
            let children: [OpaquePointer?] = entries.sorted { $0.key < $1.key }.map { entry in
                g_variant_new_dict_entry(g_variant_new_string(entry.key), g_variant_new_variant(wire(for: entry.value)))
            }
            return children.withUnsafeBufferPointer { g_variant_new_array(typeEntry, $0.baseAddress, gsize(children.count)) }
        }
    }

    /// GLib's type constants, `G_VARIANT_TYPE_BYTE` and the like, which are macros Swift
    /// does not import: a GVariantType is its type string.
    private static var typeY: OpaquePointer { OpaquePointer(("y" as StaticString).utf8Start) }
    private static var typeV: OpaquePointer { OpaquePointer(("v" as StaticString).utf8Start) }
    private static var typeEntry: OpaquePointer { OpaquePointer(("{sv}" as StaticString).utf8Start) }
}
