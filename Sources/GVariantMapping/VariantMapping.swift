import CGLib

/// How a GSettings value (a GVariant of the type its schema declares) is stored in prefsd,
/// and turned back using the type GSettings expects: the one mapping between a schema-typed
/// GVariant and the **wire value**, the GVariant prefsd holds on the bus, of a canonical
/// type (`s x d b ay (d) av a{sv}`, an `av`'s items and an `a{sv}`'s values each a `v` of
/// one of those, dictionaries sorted by key), which is a property-list value's shape.
///
/// - **Native** when prefsd has a type of the same shape: `b`; `y n q i u x`, and `t` up to
///   Int64.max, as `x`; `d`; `s`; `ay`; `(d)` when its double is finite; `aT` as `av`;
///   `a{sT}` whose keys come in sorted order as `a{sv}` (a prefsd dictionary has no order
///   and reads back sorted, so only these read back equal); `v` holding a value that reads
///   back as itself (a canonical type).
/// - **Tagged text** for every other value (tuples, maybes, object paths, signatures,
///   handles, dictionaries with other keys or with keys out of sorted order, a `(d)` of
///   NaN or ±inf, a `t` above Int64.max, a `v` holding `i`…): the string `@TYPE TEXT`,
///   GVariant's own text form with its type in front (`@(ii) (1, 2)`, `@mu nothing`,
///   `@o '/a/b'`), parsed back with `g_variant_parse`. A string stored for a `v` key that
///   starts with `@` is tagged too, so that it never reads as text to parse.
///
/// Reading goes by the expected type alone: a wire value whose shape does not fit it (an
/// integer out of range, text that does not parse as that type) has no value of that type,
/// and GSettings answers the schema's default, as with dconf.
///
/// Written in the Embedded Swift subset on GLib's C API only, so that the GSettings module
/// (`scripts/build-gio-module` compiles these sources into it) and the SwiftPM target
/// (`GVariantCoding`'s property-list values, `prefs dconf-import`/`dconf-export`, the
/// Settings app's schema pages, the dconf system databases) run the same code. Every
/// GVariant it returns is a new reference the caller owns (never floating).
public enum VariantMapping {
    // MARK: GSettings to prefsd

    /// The wire value for the schema-typed `variant`. Never fails: what has no native form
    /// is tagged text.
    public static func wire(from variant: OpaquePointer) -> OpaquePointer {
        let type = typeString(variant)
        if let native = native(variant, type[...]) {
            if type == "v", isTaggedString(native) {
                g_variant_unref(native)
                return tagged(variant, type: type)
            }
            return native
        }
        return tagged(variant, type: type)
    }

    /// Whether `type` (a GVariant type string) is one of the wire's canonical types, which a
    /// `v` may hold natively: those a prefsd value of the same shape reads back as.
    public static func isCanonical(_ type: String) -> Bool {
        switch type {
        case "s", "x", "d", "b", "ay", "(d)", "av", "a{sv}": true
        default: false
        }
    }

    /// Whether `variant` is a string whose first byte is `@`: tagged text, read by parsing.
    private static func isTaggedString(_ variant: OpaquePointer) -> Bool {
        guard typeString(variant) == "s" else { return false }
        return g_variant_get_string(variant, nil).pointee == CChar(UInt8(ascii: "@"))
    }

    private static func typeString(_ variant: OpaquePointer) -> String {
        String(cString: g_variant_get_type_string(variant))
    }

    private static func tagged(_ variant: OpaquePointer, type: String) -> OpaquePointer {
        let text = VariantText.print(variant, annotated: true)
        // GVariant puts the type in front itself when the text alone would not tell it.
        let prefix = "@" + type + " "
        return owned(g_variant_new_string(text.hasPrefix(prefix) ? text : prefix + text))!
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

    /// Runs `body` with child `index` of the container `variant`, released after it.
    public static func withChild<T>(_ variant: OpaquePointer, _ index: Int, _ body: (OpaquePointer) -> T) -> T {
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
    /// value `wire`, or `nil` when the value does not fit the type (GSettings then answers
    /// the default).
    public static func settingsValue(fromWire wire: OpaquePointer, type: String) -> OpaquePointer? {
        if type != "s", isTaggedString(wire) {
            return try? VariantText.parse(String(cString: g_variant_get_string(wire, nil)), type: type)
        }
        return make(wire, type[...])
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
