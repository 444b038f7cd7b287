/// One value of a GVDB file: a GVariant, given as its type string and its serialised bytes.
///
/// The bytes are the GVariant's serialisation in normal form and little-endian byte order, as
/// `g_variant_get_data` gives it on a little-endian machine; this module never interprets
/// them beyond what storing and finding them needs. GVDB stores each value wrapped in a
/// variant (`v`): the bytes, a zero byte, then the type string.
public struct GVDBValue: Hashable, Sendable {
    /// The GVariant type string, such as `s`, `as` or `a{sv}`.
    public let typeString: String
    /// The value's serialised bytes (normal form, little-endian).
    public let bytes: [UInt8]

    /// A value of type `typeString` serialised as `bytes`; throws if `typeString` is not one
    /// definite GVariant type, or if the type has a fixed size (`i`, `(ii)`, …) that `bytes`
    /// does not have (GLib would read such a value as the type's default).
    public init(typeString: String, bytes: [UInt8]) throws {
        let type = Array(typeString.utf8)
        guard GVariantTypeString.isDefinite(type) else {
            throw GVDBError(.invalidInput, "“\(typeString)” is not a GVariant type string of one definite type (such as s, as or a{sv})")
        }
        if let size = GVariantTypeString.fixedSize(type), size != bytes.count {
            throw GVDBError(.invalidInput, "a value of type \(typeString) is \(size) bytes long, not \(bytes.count)")
        }
        self.typeString = typeString
        self.bytes = bytes
    }

    /// The serialised variant (`v`) holding this value, as gvdb-builder stores it.
    package var variantBytes: [UInt8] {
        bytes + [0] + Array(typeString.utf8)
    }

    /// The value inside the serialised variant `variant`: everything before its last zero
    /// byte, of the type named after it.
    init(variantBytes variant: ArraySlice<UInt8>) throws {
        guard let zero = variant.lastIndex(of: 0) else {
            throw GVDBError(.badItem, "a stored value is not a serialised variant (it has no zero byte before its type string)")
        }
        let type = Array(variant[(zero + 1)...])
        guard GVariantTypeString.isDefinite(type), let typeString = String(validating: type, as: UTF8.self) else {
            throw GVDBError(.badItem, "a stored value carries no valid GVariant type string (\(type.count) bytes after its last zero byte)")
        }
        if let size = GVariantTypeString.fixedSize(type), size != zero - variant.startIndex {
            throw GVDBError(.badItem, "a stored value of type \(typeString) is \(zero - variant.startIndex) bytes long, not \(size)")
        }
        self.typeString = typeString
        self.bytes = Array(variant[..<zero])
    }
}

/// The grammar of GVariant type strings, just enough to know where a variant's type string
/// ends and that it names one definite type.
enum GVariantTypeString {
    /// Whether `type` is exactly one definite GVariant type.
    static func isDefinite(_ type: [UInt8]) -> Bool {
        var index = 0
        guard parse(type, &index, depth: 0), index == type.count else { return false }
        return true
    }

    /// The serialised size of every value of `type` when the type has one (GVariant's
    /// fixed-size types: numbers, booleans, and tuples and dictionary entries of them), nil
    /// otherwise. `type` is a definite type string.
    static func fixedSize(_ type: [UInt8]) -> Int? {
        var index = 0
        return layout(type, &index)?.size
    }

    /// The alignment and, when fixed, the size of the type at `index`, moving past it; nil
    /// when the type at `index` is not fixed-size (its end is still found).
    private static func layout(_ type: [UInt8], _ index: inout Int) -> (alignment: Int, size: Int)? {
        guard index < type.count else { return nil }
        let character = type[index]
        index += 1
        switch character {
        case UInt8(ascii: "b"), UInt8(ascii: "y"): return (1, 1)
        case UInt8(ascii: "n"), UInt8(ascii: "q"): return (2, 2)
        case UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"): return (4, 4)
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"): return (8, 8)
        case UInt8(ascii: "a"), UInt8(ascii: "m"):
            _ = layout(type, &index)
            return nil
        case UInt8(ascii: "("), UInt8(ascii: "{"):
            let close = character == UInt8(ascii: "(") ? UInt8(ascii: ")") : UInt8(ascii: "}")
            var fixed = true
            var alignment = 1
            var size = 0
            while index < type.count, type[index] != close {
                if let member = layout(type, &index) {
                    alignment = max(alignment, member.alignment)
                    size = (size + member.alignment - 1) / member.alignment * member.alignment + member.size
                } else {
                    fixed = false
                }
            }
            index += 1
            guard fixed else { return nil }
            // The unit tuple takes one byte; any other ends padded to its alignment.
            return size == 0 ? (1, 1) : (alignment, (size + alignment - 1) / alignment * alignment)
        default:
            return nil
        }
    }

    /// GLib's limit on nesting.
    private static let maximumDepth = 128

    /// Parses one type at `index`, moving `index` past it.
    private static func parse(_ type: [UInt8], _ index: inout Int, depth: Int) -> Bool {
        guard depth < maximumDepth, index < type.count else { return false }
        let character = type[index]
        index += 1
        switch character {
        case UInt8(ascii: "b"), UInt8(ascii: "y"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"), UInt8(ascii: "u"),
            UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "h"), UInt8(ascii: "d"), UInt8(ascii: "s"), UInt8(ascii: "o"),
            UInt8(ascii: "g"), UInt8(ascii: "v"):
            return true
        case UInt8(ascii: "a"), UInt8(ascii: "m"):
            return parse(type, &index, depth: depth + 1)
        case UInt8(ascii: "("):
            while index < type.count, type[index] != UInt8(ascii: ")") {
                guard parse(type, &index, depth: depth + 1) else { return false }
            }
            guard index < type.count else { return false }
            index += 1
            return true
        case UInt8(ascii: "{"):
            guard index < type.count, isBasic(type[index]) else { return false }
            index += 1
            guard parse(type, &index, depth: depth + 1), index < type.count, type[index] == UInt8(ascii: "}") else { return false }
            index += 1
            return true
        default:
            return false
        }
    }

    /// Whether `character` is a basic type (a dictionary entry's key).
    private static func isBasic(_ character: UInt8) -> Bool {
        Array("bynqiuxthdsog".utf8).contains(character)
    }
}
