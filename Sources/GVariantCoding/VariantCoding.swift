import CGIO
import Foundation
import PreferencesModel

/// How a GSettings value (a GVariant of the type its schema declares) is stored in prefsd,
/// and turned back using the type GSettings expects.
///
/// - **Native**, when prefsd has a type of the same shape: `b` boolean; `y n q i u x`, and
///   `t` up to Int64.max, integer; `d` real; `s` string; `ay` data; `(d)` date; `aT` array
///   of T; `a{sT}` dictionary whose keys come in sorted order (the order a dictionary reads
///   back in); `(d)` date when the double is finite; `v` holding a value that reads back as
///   itself (`s x d b ay (d) av a{sv}`).
/// - **Tagged text** for every other value (tuples, maybes, object paths, signatures,
///   handles, dictionaries with other keys or with keys out of sorted order, a `(d)` of
///   NaN or ±inf, a `t` above Int64.max, a `v` holding `i`…):
///   the string `@TYPE TEXT`, GVariant's own text form with its type in front
///   (`@(ii) (1, 2)`, `@mu nothing`, `@o '/a/b'`), parsed back with `g_variant_parse`.
///   A string stored for a `v` key that starts with `@` is tagged too, so that it never
///   reads as text to parse.
///
/// Reading goes by the expected type alone: a stored value whose shape does not fit it
/// (an integer out of range, text that does not parse as that type) reads as unset, and
/// GSettings answers the schema's default, as with dconf.
///
/// Used by `prefs dconf-import`/`dconf-export`; the GSettings backend (`Sources/GSettingsBackend`,
/// Embedded Swift without Foundation) does the same mapping GVariant to GVariant in its
/// `VariantMapping`, so that both store a GVariant the same way (GSettingsBackendTests'
/// `DconfMigrationTests` compare them).
public enum VariantCoding {
    /// The prefsd value for `variant`. Never fails: what has no native form is tagged text.
    public static func propertyList(from variant: OpaquePointer) -> PropertyListValue {
        let type = typeString(of: variant)
        if let native = native(variant, type[...]) {
            if case .string(let text) = native, type == "v", text.hasPrefix("@") {
                return tagged(variant, type: type)
            }
            return native
        }
        return tagged(variant, type: type)
    }

    /// A new floating GVariant of type `type` (a GVariant type string) for `value`, or
    /// `nil` when the value does not fit the type.
    public static func variant(from value: PropertyListValue, type: String) -> OpaquePointer? {
        if type != "s", case .string(let text) = value, text.hasPrefix("@") {
            return parse(text, type: type)
        }
        return make(value, type[...])
    }

    // MARK: GVariant to prefsd

    private static func typeString(of variant: OpaquePointer) -> String {
        String(cString: g_variant_get_type_string(variant))
    }

    private static func tagged(_ variant: OpaquePointer, type: String) -> PropertyListValue {
        guard let printed = g_variant_print(variant, 1) else { return .string("@\(type) ") }
        defer { g_free(printed) }
        let text = String(cString: printed)
        // GVariant puts the type in front itself when the text alone would not tell it.
        return .string(text.hasPrefix("@\(type) ") ? text : "@\(type) " + text)
    }

    private static func native(_ variant: OpaquePointer, _ type: Substring) -> PropertyListValue? {
        switch type {
        case "b": return .boolean(g_variant_get_boolean(variant) != 0)
        case "y": return .integer(Int64(g_variant_get_byte(variant)))
        case "n": return .integer(Int64(g_variant_get_int16(variant)))
        case "q": return .integer(Int64(g_variant_get_uint16(variant)))
        case "i": return .integer(Int64(g_variant_get_int32(variant)))
        case "u": return .integer(Int64(g_variant_get_uint32(variant)))
        case "x": return .integer(Int64(g_variant_get_int64(variant)))
        case "t":
            let value = g_variant_get_uint64(variant)
            return value <= UInt64(Int64.max) ? .integer(Int64(value)) : nil
        case "d": return .real(g_variant_get_double(variant))
        case "s": return .string(String(cString: g_variant_get_string(variant, nil)))
        case "ay":
            var count: gsize = 0
            guard let bytes = g_variant_get_fixed_array(variant, &count, 1) else { return .data(Data()) }
            return .data(Data(bytes: bytes, count: Int(count)))
        case "(d)":
            // A date is a finite number of seconds: NaN and ±inf stay doubles, as tagged text.
            let seconds = withChild(variant, 0) { g_variant_get_double($0) }
            return seconds.isFinite ? .date(secondsSince1970: seconds) : nil
        case "v":
            guard let inner = g_variant_get_variant(variant) else { return nil }
            defer { g_variant_unref(inner) }
            let innerType = typeString(of: inner)
            return canonicalTypes.contains(innerType) ? native(inner, innerType[...]) : nil
        default:
            break
        }
        guard type.first == "a" else { return nil }
        let element = type.dropFirst()
        let count = Int(g_variant_n_children(variant))
        if element.first == "{" {
            guard element.dropFirst().first == "s" else { return nil }
            let valueType = element.dropFirst(2).dropLast()
            // A prefsd dictionary has no order and reads back sorted by key: native only when
            // the entries already come in that order (which also rules out a key named twice
            // or in two normalisations), so that the GVariant reads back equal, order included.
            var dictionary: [String: PropertyListValue] = [:]
            var previous: String?
            for index in 0..<count {
                let entry: (String, PropertyListValue)?? = withChild(variant, index) { pair in
                    let key = withChild(pair, 0) { String(cString: g_variant_get_string($0, nil)) }
                    let value = withChild(pair, 1) { native($0, valueType) }
                    return value.map { (key, $0) }
                }
                guard let pair = entry ?? nil, previous.map({ $0 < pair.0 }) ?? true else { return nil }
                previous = pair.0
                dictionary[pair.0] = pair.1
            }
            return .dictionary(dictionary)
        }
        var items: [PropertyListValue] = []
        items.reserveCapacity(count)
        for index in 0..<count {
            guard let item = withChild(variant, index, { native($0, element) }) else { return nil }
            items.append(item)
        }
        return .array(items)
    }

    /// The types a `v` may hold natively: those a prefsd value of the same shape reads back as.
    private static let canonicalTypes: Set<String> = ["s", "x", "d", "b", "ay", "(d)", "av", "a{sv}"]

    private static func withChild<T>(_ variant: OpaquePointer, _ index: Int, _ body: (OpaquePointer) -> T) -> T {
        let child = g_variant_get_child_value(variant, gsize(index))!
        defer { g_variant_unref(child) }
        return body(child)
    }

    // MARK: prefsd to GVariant

    private static func parse(_ text: String, type: String) -> OpaquePointer? {
        guard let variantType = g_variant_type_new(type) else { return nil }
        defer { g_variant_type_free(variantType) }
        var error: UnsafeMutablePointer<GError>?
        let parsed = g_variant_parse(variantType, text, nil, nil, &error)
        if let error { g_error_free(error) }
        return parsed
    }

    private static func make(_ value: PropertyListValue, _ type: Substring) -> OpaquePointer? {
        switch (type, value) {
        case ("b", .boolean(let flag)): return g_variant_new_boolean(flag ? 1 : 0)
        case ("y", .integer(let number)): return UInt8(exactly: number).map { g_variant_new_byte($0) }
        case ("n", .integer(let number)): return Int16(exactly: number).map { g_variant_new_int16($0) }
        case ("q", .integer(let number)): return UInt16(exactly: number).map { g_variant_new_uint16($0) }
        case ("i", .integer(let number)): return Int32(exactly: number).map { g_variant_new_int32($0) }
        case ("u", .integer(let number)): return UInt32(exactly: number).map { g_variant_new_uint32($0) }
        case ("x", .integer(let number)): return g_variant_new_int64(gint64(number))
        case ("t", .integer(let number)): return UInt64(exactly: number).map { g_variant_new_uint64(guint64($0)) }
        case ("d", .real(let number)): return g_variant_new_double(number)
        case ("s", .string(let text)): return g_variant_new_string(text)
        case ("ay", .data(let bytes)): return byteArray(bytes)
        case ("(d)", .date(let seconds)):
            var field: OpaquePointer? = g_variant_new_double(seconds)
            return g_variant_new_tuple(&field, 1)
        case ("v", _): return canonical(value).map { g_variant_new_variant($0) }
        case (_, .array(let items)) where type.first == "a" && type.dropFirst().first != "{":
            return container(type.dropFirst(), items.map { item in { make(item, type.dropFirst()) } })
        case (_, .dictionary(let entries)) where type.hasPrefix("a{s"):
            let element = type.dropFirst()
            let valueType = element.dropFirst(2).dropLast()
            return container(
                element,
                entries.sorted { $0.key < $1.key }.map { entry in
                    {
                        guard let value = make(entry.value, valueType) else { return nil }
                        return g_variant_new_dict_entry(g_variant_new_string(entry.key), value)
                    }
                })
        default: return nil
        }
    }

    /// The value as a `v` holds it when it has no declared type: the type prefsd reads it back as.
    private static func canonical(_ value: PropertyListValue) -> OpaquePointer? {
        switch value {
        case .string: make(value, "s")
        case .integer: make(value, "x")
        case .real: make(value, "d")
        case .boolean: make(value, "b")
        case .data: make(value, "ay")
        case .date: make(value, "(d)")
        case .array: make(value, "av")
        case .dictionary: make(value, "a{sv}")
        }
    }

    private static func byteArray(_ bytes: Data) -> OpaquePointer? {
        guard let byte = g_variant_type_new("y") else { return nil }
        defer { g_variant_type_free(byte) }
        return bytes.withUnsafeBytes { g_variant_new_fixed_array(byte, $0.baseAddress, gsize(bytes.count), 1) }
    }

    /// An array of `elementType` from the children `makers` build; `nil` (freeing what
    /// was built) when one of them does not fit.
    private static func container(_ elementType: Substring, _ makers: [() -> OpaquePointer?]) -> OpaquePointer? {
        var children: [OpaquePointer?] = []
        children.reserveCapacity(makers.count)
        for maker in makers {
            guard let child = maker() else {
                for built in children { g_variant_unref(g_variant_ref_sink(built)) }
                return nil
            }
            children.append(child)
        }
        guard let type = g_variant_type_new(String(elementType)) else { return nil }
        defer { g_variant_type_free(type) }
        return children.withUnsafeBufferPointer { g_variant_new_array(type, $0.baseAddress, gsize(children.count)) }
    }
}
