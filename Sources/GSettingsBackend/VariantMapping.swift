import CGSettingsBackend

/// How a GSettings value (a GVariant of the type its schema declares) is stored in prefsd
/// and read back: exactly the mapping of `Sources/GVariantCoding/VariantCoding.swift`
/// (which `prefs dconf-import` uses, and the README's GSettings section describes), done
/// here GVariant to GVariant, without `PropertyListValue` and Foundation.
///
/// - **Native** when prefsd has a type of the same shape: `b`; `y n q i u x`, and `t` up to
///   Int64.max, as `x`; `d`; `s`; `ay`; `(d)` when finite; `aT` as `av`; `a{sT}` whose keys
///   come in sorted order as `a{sv}`; `v` holding a value that reads back as itself.
/// - **Tagged text** for every other value: the string `@TYPE TEXT`, parsed back with
///   `g_variant_parse`. A string stored for a `v` key that starts with `@` is tagged too.
enum VariantMapping {
    // MARK: GSettings to prefsd

    /// The wire value for a GSettings value. Never fails: what has no native form is tagged text.
    static func wire(from variant: OpaquePointer) -> WireValue {
        let type = typeString(variant)
        if let native = native(variant, type[...]) {
            if type == "v", isTaggedString(native) {
                g_variant_unref(native)
                return tagged(variant, type: type)
            }
            return WireValue(taking: native)
        }
        return tagged(variant, type: type)
    }

    private static func isTaggedString(_ variant: OpaquePointer) -> Bool {
        guard typeString(variant) == "s" else { return false }
        return g_variant_get_string(variant, nil).pointee == CChar(UInt8(ascii: "@"))
    }

    private static func typeString(_ variant: OpaquePointer) -> String {
        String(cString: g_variant_get_type_string(variant))
    }

    private static func tagged(_ variant: OpaquePointer, type: String) -> WireValue {
        guard let printed = g_variant_print(variant, 1) else { return WireValue(taking: g_variant_new_string("@" + type + " ")) }
        defer { g_free(printed) }
        let text = String(cString: printed)
        // GVariant puts the type in front itself when the text alone would not tell it.
        let prefix = "@" + type + " "
        return WireValue(taking: g_variant_new_string(text.hasPrefix(prefix) ? text : prefix + text))
    }

    /// A new reference (never floating) to the wire GVariant, or `nil` when the value has
    /// no native form.
    private static func native(_ variant: OpaquePointer, _ type: Substring) -> OpaquePointer? {
        switch type {
        case "b", "x", "d", "s", "ay": return g_variant_ref(variant)
        case "y": return owned(g_variant_new_int64(gint64(g_variant_get_byte(variant))))
        case "n": return owned(g_variant_new_int64(gint64(g_variant_get_int16(variant))))
        case "q": return owned(g_variant_new_int64(gint64(g_variant_get_uint16(variant))))
        case "i": return owned(g_variant_new_int64(gint64(g_variant_get_int32(variant))))
        case "u": return owned(g_variant_new_int64(gint64(g_variant_get_uint32(variant))))
        case "t":
            let value = g_variant_get_uint64(variant)
            return value <= UInt64(Int64.max) ? owned(g_variant_new_int64(gint64(value))) : nil
        case "(d)":
            // A date is a finite number of seconds: NaN and ±inf stay doubles, as tagged text.
            let seconds = withChild(variant, 0) { g_variant_get_double($0) }
            return seconds.isFinite ? g_variant_ref(variant) : nil
        case "v":
            guard let inner = g_variant_get_variant(variant) else { return nil }
            defer { g_variant_unref(inner) }
            let innerType = typeString(inner)
            return isCanonical(innerType) ? native(inner, innerType[...]) : nil
        default:
            break
        }
        guard type.first == "a" else { return nil }
        let element = type.dropFirst()
        let count = Int(g_variant_n_children(variant))
        var children: [OpaquePointer] = []
        children.reserveCapacity(count)
        if element.first == "{" {
            guard element.dropFirst().first == "s" else { return nil }
            let valueType = element.dropFirst(2).dropLast()
            // A prefsd dictionary has no order and reads back sorted by key: native only when
            // the entries already come in that order (which also rules out a key named twice
            // or in two normalisations), so that the GVariant reads back equal, order included.
            var previous: String?
            for index in 0..<count {
                let made: OpaquePointer? = withChild(variant, index) { (pair: OpaquePointer) -> OpaquePointer? in
                    let key = withChild(pair, 0) { String(cString: g_variant_get_string($0, nil)) }
                    if let previous, !(previous < key) { return nil }
                    previous = key
                    guard let value = withChild(pair, 1, { native($0, valueType) }) else { return nil }
                    return entry(owned(g_variant_new_string(key))!, owned(g_variant_new_variant(value))!, releasing: value)
                }
                guard let made else { return release(children) }
                children.append(made)
            }
            return array(children, elementType: "{sv}")
        }
        for index in 0..<count {
            guard let item = withChild(variant, index, { native($0, element) }) else { return release(children) }
            children.append(owned(g_variant_new_variant(item))!)
            g_variant_unref(item)
        }
        return array(children, elementType: "v")
    }

    /// The types a `v` may hold natively: those a prefsd value of the same shape reads back as.
    private static func isCanonical(_ type: String) -> Bool {
        switch type {
        case "s", "x", "d", "b", "ay", "(d)", "av", "a{sv}": true
        default: false
        }
    }

    private static func withChild<T>(_ variant: OpaquePointer, _ index: Int, _ body: (OpaquePointer) -> T) -> T {
        let child = g_variant_get_child_value(variant, gsize(index))!
        defer { g_variant_unref(child) }
        return body(child)
    }

    /// `variant` sunk: an owned, non-floating reference.
    private static func owned(_ variant: OpaquePointer?) -> OpaquePointer? {
        variant.map { g_variant_ref_sink($0) }
    }

    /// A dictionary entry of `key` and `value` (both owned, released here; `extra` too).
    private static func entry(_ key: OpaquePointer, _ value: OpaquePointer, releasing extra: OpaquePointer? = nil) -> OpaquePointer? {
        let made = owned(g_variant_new_dict_entry(key, value))
        g_variant_unref(key)
        g_variant_unref(value)
        if let extra { g_variant_unref(extra) }
        return made
    }

    /// An owned array of `elementType` from `children` (owned, released here).
    private static func array(_ children: [OpaquePointer], elementType: String) -> OpaquePointer? {
        guard let type = g_variant_type_new(elementType) else { return release(children) }
        defer { g_variant_type_free(type) }
        let items: [OpaquePointer?] = children.map { $0 }
        let made = owned(items.withUnsafeBufferPointer { g_variant_new_array(type, $0.baseAddress, gsize(items.count)) })
        _ = release(children)
        return made
    }

    /// Releases `children`; returns `nil`.
    private static func release(_ children: [OpaquePointer]) -> OpaquePointer? {
        for child in children { g_variant_unref(child) }
        return nil
    }

    // MARK: prefsd to GSettings

    /// A new reference to a GVariant of type `type` (a GVariant type string) for the wire
    /// value, or `nil` when the value does not fit the type (GSettings then answers the default).
    static func settingsValue(_ value: WireValue, type: String) -> OpaquePointer? {
        if type != "s", typeString(value.variant) == "s", isTaggedString(value.variant) {
            return owned(parse(value.variant, type: type))
        }
        return make(value.variant, type[...])
    }

    private static func parse(_ text: OpaquePointer, type: String) -> OpaquePointer? {
        guard let variantType = g_variant_type_new(type) else { return nil }
        defer { g_variant_type_free(variantType) }
        var error: UnsafeMutablePointer<GError>?
        let parsed = g_variant_parse(variantType, g_variant_get_string(text, nil), nil, nil, &error)
        if let error { g_error_free(error) }
        return parsed
    }

    /// `value` unwrapped of the variants around it.
    private static func unwrapped(_ value: OpaquePointer) -> OpaquePointer {
        var current = g_variant_ref(value)!
        while typeString(current) == "v", let inner = g_variant_get_variant(current) {
            g_variant_unref(current)
            current = inner
        }
        return current
    }

    /// A new reference (never floating) to the GSettings value of `type`, or `nil`.
    private static func make(_ wrapped: OpaquePointer, _ type: Substring) -> OpaquePointer? {
        let value = unwrapped(wrapped)
        defer { g_variant_unref(value) }
        let stored = typeString(value)
        switch (type, stored) {
        case ("b", "b"), ("d", "d"), ("s", "s"), ("ay", "ay"), ("x", "x"), ("(d)", "(d)"): return g_variant_ref(value)
        case ("y", "x"): return UInt8(exactly: g_variant_get_int64(value)).flatMap { owned(g_variant_new_byte($0)) }
        case ("n", "x"): return Int16(exactly: g_variant_get_int64(value)).flatMap { owned(g_variant_new_int16($0)) }
        case ("q", "x"): return UInt16(exactly: g_variant_get_int64(value)).flatMap { owned(g_variant_new_uint16($0)) }
        case ("i", "x"): return Int32(exactly: g_variant_get_int64(value)).flatMap { owned(g_variant_new_int32($0)) }
        case ("u", "x"): return UInt32(exactly: g_variant_get_int64(value)).flatMap { owned(g_variant_new_uint32($0)) }
        case ("t", "x"): return UInt64(exactly: g_variant_get_int64(value)).flatMap { owned(g_variant_new_uint64(guint64($0))) }
        case ("v", _): return isCanonical(stored) ? owned(g_variant_new_variant(value)) : nil
        default: break
        }
        guard type.first == "a", stored.first == "a" else { return nil }
        let element = type.dropFirst()
        let count = Int(g_variant_n_children(value))
        var children: [OpaquePointer] = []
        children.reserveCapacity(count)
        if element.first == "{" {
            guard stored == "a{sv}", element.dropFirst().first == "s" else { return nil }
            let valueType = element.dropFirst(2).dropLast()
            // Stored sorted by key, as prefsd sorts a dictionary: the order GSettings gets.
            for index in 0..<count {
                let made: OpaquePointer? = withChild(value, index) { (pair: OpaquePointer) -> OpaquePointer? in
                    guard let item = withChild(pair, 1, { make($0, valueType) }) else { return nil }
                    return entry(withChild(pair, 0) { g_variant_ref($0)! }, item)
                }
                guard let made else { return release(children) }
                children.append(made)
            }
        } else {
            guard stored == "av" else { return nil }
            for index in 0..<count {
                guard let item = withChild(value, index, { make($0, element) }) else { return release(children) }
                children.append(item)
            }
        }
        return array(children, elementType: String(element))
    }
}
