import CGLib
import GVariantCoding
import PreferencesModel

/// How an xfconf value is kept in prefsd's store: the property-list value the GSettings
/// module stores for a GVariant (``VariantCoding``, the one mapping dconf's keys use too),
/// beside the GVariant type it was written with, which the store keeps per key and which
/// gives the value back with its exact type.
///
/// A scalar is stored as its own GVariant type (`b i u x t d s y n q`: `y n q i u x` and a
/// `t` up to Int64.max as an integer, a larger `t` as the tagged text `@t N`); an array whose
/// items all have one type `T` as `aT` (an array of those values); any other array, the
/// empty one among them, as `av` (an array when every item is of a canonical type, `s x d
/// b`, else tagged text).
extension XfconfValue {
    /// The GVariant type prefsd keeps beside the stored value.
    public var storedType: String {
        switch self {
        case .scalar(let scalar): return scalar.gvariantType
        case .array(let items):
            guard let first = items.first?.gvariantType, items.allSatisfy({ $0.gvariantType == first }) else { return "av" }
            return "a" + first
        }
    }

    /// The property-list value prefsd stores.
    public var storedValue: PropertyListValue {
        let variant = makeVariant()
        defer { g_variant_unref(variant) }
        return VariantCoding.propertyList(from: variant)
    }

    /// The xfconf value of the stored `value`: of `type` (the GVariant type it was last
    /// written with) while the value still fits it and xfconf carries it, else of the
    /// value's own shape (a string `s`, an integer `x`, a real `d`, a boolean `b`, an array
    /// of those `av`); `nil` when xfconf carries neither (data, dates, dictionaries, nested
    /// arrays, written through prefsd's own interface).
    public init?(storedValue value: PropertyListValue, type: String?) {
        if let type, let typed = Self.typed(value, type: type) {
            self = typed
        } else if let natural = Self.natural(value) {
            self = natural
        } else {
            return nil
        }
    }

    /// Whether xfconf carries values of the GVariant type `type`: a scalar's, an array of
    /// one scalar type's, or `av`.
    public static func carries(type: String) -> Bool {
        if XfconfScalar.gvariantTypes.contains(type) || type == "av" { return true }
        return type.utf8.first == UInt8(ascii: "a") && XfconfScalar.gvariantTypes.contains(String(type.dropFirst()))
    }

    // MARK: GVariants

    /// A new reference (not floating) to the GVariant of ``storedType`` for the value.
    func makeVariant() -> OpaquePointer {
        switch self {
        case .scalar(let scalar):
            return g_variant_ref_sink(scalar.makeVariant())
        case .array(let items):
            let type = storedType
            let elementType = String(type.dropFirst())
            let children: [OpaquePointer?] = items.map { type == "av" ? g_variant_new_variant($0.makeVariant()) : $0.makeVariant() }
            let element = g_variant_type_new(elementType)
            defer { g_variant_type_free(element) }
            return g_variant_ref_sink(children.withUnsafeBufferPointer { g_variant_new_array(element, $0.baseAddress, gsize(children.count)) })
        }
    }

    /// The xfconf value of `variant`, or `nil` when xfconf carries no value of its type.
    init?(variant: OpaquePointer) {
        let type = String(cString: g_variant_get_type_string(variant))
        if let scalar = XfconfScalar(variant: variant) {
            self = .scalar(scalar)
            return
        }
        guard Self.carries(type: type) else { return nil }
        var items: [XfconfScalar] = []
        for index in 0..<Int(g_variant_n_children(variant)) {
            let child = g_variant_get_child_value(variant, gsize(index))!
            defer { g_variant_unref(child) }
            let item: XfconfScalar?
            if type == "av" {
                let inner = g_variant_get_variant(child)!
                defer { g_variant_unref(inner) }
                item = XfconfScalar(variant: inner)
            } else {
                item = XfconfScalar(variant: child)
            }
            guard let item else { return nil }
            items.append(item)
        }
        self = .array(items)
    }

    /// The value of `value` read as a GVariant of `type`, or `nil` when it does not fit or
    /// xfconf does not carry the type.
    private static func typed(_ value: PropertyListValue, type: String) -> XfconfValue? {
        guard carries(type: type), let variant = VariantCoding.variant(from: value, type: type) else { return nil }
        defer { g_variant_unref(variant) }
        return XfconfValue(variant: variant)
    }

    /// The value of `value`'s own shape, or `nil` when xfconf carries no such value.
    private static func natural(_ value: PropertyListValue) -> XfconfValue? {
        if let scalar = XfconfScalar(natural: value) { return .scalar(scalar) }
        guard case .array(let items) = value else { return nil }
        var scalars: [XfconfScalar] = []
        scalars.reserveCapacity(items.count)
        for item in items {
            guard let scalar = XfconfScalar(natural: item) else { return nil }
            scalars.append(scalar)
        }
        return .array(scalars)
    }
}

extension XfconfScalar {
    /// A new floating GVariant of the value.
    func makeVariant() -> OpaquePointer {
        switch self {
        case .bool(let flag): g_variant_new_boolean(flag ? 1 : 0)
        case .int32(let number): g_variant_new_int32(number)
        case .uint32(let number): g_variant_new_uint32(number)
        case .int64(let number): g_variant_new_int64(gint64(number))
        case .uint64(let number): g_variant_new_uint64(guint64(number))
        case .double(let number): g_variant_new_double(number)
        case .string(let text): g_variant_new_string(text)
        case .uchar(let number): g_variant_new_byte(number)
        case .int16(let number): g_variant_new_int16(number)
        case .uint16(let number): g_variant_new_uint16(number)
        }
    }

    /// The scalar of `variant`, or `nil` when it is not of a scalar type xfconf carries.
    init?(variant: OpaquePointer) {
        switch String(cString: g_variant_get_type_string(variant)) {
        case "b": self = .bool(g_variant_get_boolean(variant) != 0)
        case "i": self = .int32(g_variant_get_int32(variant))
        case "u": self = .uint32(g_variant_get_uint32(variant))
        case "x": self = .int64(Int64(g_variant_get_int64(variant)))
        case "t": self = .uint64(UInt64(g_variant_get_uint64(variant)))
        case "d": self = .double(g_variant_get_double(variant))
        case "s": self = .string(String(cString: g_variant_get_string(variant, nil)))
        case "y": self = .uchar(g_variant_get_byte(variant))
        case "n": self = .int16(g_variant_get_int16(variant))
        case "q": self = .uint16(g_variant_get_uint16(variant))
        default: return nil
        }
    }

    /// The scalar of the stored `value`'s own shape, or `nil` when it is not a scalar xfconf
    /// carries (xfconf's strings hold no NUL).
    init?(natural value: PropertyListValue) {
        switch value {
        case .boolean(let flag): self = .bool(flag)
        case .integer(let number): self = .int64(number)
        case .real(let number): self = .double(number)
        case .string(let text) where !text.utf8.contains(0): self = .string(text)
        default: return nil
        }
    }
}
