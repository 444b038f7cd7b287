/// One D-Bus value of a single complete type.
///
/// Only the two cases that hold a `DBusValue` directly are `indirect`: an `indirect enum`
/// boxes every case with a payload, a heap allocation and release for each string or
/// number decoded or sent (several per call on prefsd's `Read` path). Arrays and structs
/// hold Swift arrays, already on the heap.
public enum DBusValue: Sendable, Hashable {
    /// `y`
    case byte(UInt8)
    /// `b`
    case boolean(Bool)
    /// `n`
    case int16(Int16)
    /// `q`
    case uint16(UInt16)
    /// `i`
    case int32(Int32)
    /// `u`
    case uint32(UInt32)
    /// `x`
    case int64(Int64)
    /// `t`
    case uint64(UInt64)
    /// `d`
    case double(Double)
    /// `s`; must not contain NUL.
    case string(String)
    /// `o`; must be a valid object path.
    case objectPath(String)
    /// `g`; must be a valid signature.
    case signature(String)
    /// `h`: a file descriptor arrived; the decoder closes it at once, so the value cannot be
    /// used. It cannot be sent.
    case unixFD
    /// `ay`; the form the decoder produces for byte arrays.
    case bytes([UInt8])
    /// `a` + `element`: the element type is given explicitly so empty arrays work. Every element
    /// must have exactly that signature. `.array(element: "y", …)` is encoded like ``bytes(_:)``.
    case array(element: DBusSignature, [DBusValue])
    /// `{kv}`: only valid as an element of an array whose element signature is `{…}`.
    indirect case dictEntry(DBusValue, DBusValue)
    /// `(…)`: a struct of one or more fields.
    case structure([DBusValue])
    /// `v`: the inner value's signature travels with it.
    indirect case variant(DBusValue)

    /// The signature of this single complete type.
    public var signature: DBusSignature {
        DBusSignature(unchecked: signatureText)
    }

    /// The type code of a basic value or a variant, whose signature is that one letter;
    /// nil for containers (no string is built either way).
    var oneLetterTypeCode: UInt8? {
        switch self {
        case .byte: return 0x79  // y
        case .boolean: return 0x62  // b
        case .int16: return 0x6E  // n
        case .uint16: return 0x71  // q
        case .int32: return 0x69  // i
        case .uint32: return 0x75  // u
        case .int64: return 0x78  // x
        case .uint64: return 0x74  // t
        case .double: return 0x64  // d
        case .string: return 0x73  // s
        case .objectPath: return 0x6F  // o
        case .signature: return 0x67  // g
        case .unixFD: return 0x68  // h
        case .variant: return 0x76  // v
        case .bytes, .array, .dictEntry, .structure: return nil
        }
    }

    var signatureText: String {
        switch self {
        case .byte: return "y"
        case .boolean: return "b"
        case .int16: return "n"
        case .uint16: return "q"
        case .int32: return "i"
        case .uint32: return "u"
        case .int64: return "x"
        case .uint64: return "t"
        case .double: return "d"
        case .string: return "s"
        case .objectPath: return "o"
        case .signature: return "g"
        case .unixFD: return "h"
        case .bytes: return "ay"
        case .array(let element, _): return "a" + element.rawValue
        case .dictEntry(let key, let value): return "{" + key.signatureText + value.signatureText + "}"
        case .structure(let fields): return "(" + fields.map(\.signatureText).joined() + ")"
        case .variant: return "v"
        }
    }

    /// A dictionary: an array of `{key value}` entries with the given key and value types.
    public static func dictionary(
        key: DBusSignature, value: DBusSignature, _ entries: [(DBusValue, DBusValue)]
    ) -> DBusValue {
        .array(
            element: DBusSignature(unchecked: "{" + key.rawValue + value.rawValue + "}"),
            entries.map { .dictEntry($0.0, $0.1) })
    }
}

extension DBusValue {
    /// The string of a `.string`, else nil.
    public var stringValue: String? {
        if case .string(let s) = self { return s }
        return nil
    }

    /// The value inside a `.variant`, else nil.
    public var variantValue: DBusValue? {
        if case .variant(let v) = self { return v }
        return nil
    }
}
