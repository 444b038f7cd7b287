/// One value of a type xfconf carries: what a property holds, or an item of an array.
///
/// Each case is one of xfconfd's value types, with the GVariant type xfconf's clients send
/// and receive it as (``gvariantType``) and its type name in channel files (``fileType``).
public enum XfconfScalar: Sendable, Hashable {
    /// `b`, `bool`.
    case bool(Bool)
    /// `i`, `int`.
    case int32(Int32)
    /// `u`, `uint`.
    case uint32(UInt32)
    /// `x`, `int64`.
    case int64(Int64)
    /// `t`, `uint64`.
    case uint64(UInt64)
    /// `d`, `double`.
    case double(Double)
    /// `s`, `string`.
    case string(String)
    /// `y`, `uchar`.
    case uchar(UInt8)
    /// `n`, `int16` (a channel file's `char` reads as this: xfconfd sends a `char` as `n`).
    case int16(Int16)
    /// `q`, `uint16`.
    case uint16(UInt16)

    /// The GVariant type of the value: one of `b i u x t d s y n q`.
    public var gvariantType: String {
        switch self {
        case .bool: "b"
        case .int32: "i"
        case .uint32: "u"
        case .int64: "x"
        case .uint64: "t"
        case .double: "d"
        case .string: "s"
        case .uchar: "y"
        case .int16: "n"
        case .uint16: "q"
        }
    }

    /// The GVariant types of the scalars, each one character: `b i u x t d s y n q`.
    public static let gvariantTypes: Set<String> = ["b", "i", "u", "x", "t", "d", "s", "y", "n", "q"]
}

/// A property's value as xfconf carries it: one scalar, or an array of scalars of any types
/// (xfconf sends an array as `av`; an array may be empty).
///
/// A property that only holds others (a channel file's `type="empty"`) has no value: xfconfd
/// answers `GetProperty` on it with `PropertyNotFound`.
public enum XfconfValue: Sendable, Hashable {
    /// One value.
    case scalar(XfconfScalar)
    /// An array of values, each of its own type.
    case array([XfconfScalar])
}
