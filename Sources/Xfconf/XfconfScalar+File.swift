import CGLib

#if canImport(Glibc)
    import Glibc
#endif

/// A scalar as a channel file spells it: `type="int" value="42"`, read and written as
/// xfconfd reads and writes it.
extension XfconfScalar {
    /// The value's type name as a channel file is written (`bool int uint int64 uint64
    /// double string uchar`). An `int16` is written as an `int` and a `uint16` as a `uint`,
    /// the types xfconfd itself gives them when a client sets one: xfconfd 4.18 reads a file's
    /// `int16` and `uint16` as 0.
    public var fileType: String {
        switch self {
        case .bool: "bool"
        case .int32: "int"
        case .uint32: "uint"
        case .int64: "int64"
        case .uint64: "uint64"
        case .double: "double"
        case .string: "string"
        case .uchar: "uchar"
        case .int16: "int"
        case .uint16: "uint"
        }
    }

    /// The value's text in a channel file, unescaped: decimal integers, `true`/`false`, a
    /// double in the shortest form that reads back as the same double (GLib's
    /// `g_ascii_dtostr`, as xfconfd writes it).
    public var fileText: String {
        switch self {
        case .bool(let flag): return flag ? "true" : "false"
        case .int32(let number): return String(number)
        case .uint32(let number): return String(number)
        case .int64(let number): return String(number)
        case .uint64(let number): return String(number)
        case .double(let number):
            var buffer = [CChar](repeating: 0, count: 40)
            return buffer.withUnsafeMutableBufferPointer { String(cString: g_ascii_dtostr($0.baseAddress, gint($0.count), number)) }
        case .string(let text): return text
        case .uchar(let number): return String(number)
        case .int16(let number): return String(number)
        case .uint16(let number): return String(number)
        }
    }

    /// The value of `text` read as a channel file's `type`, as xfconfd reads it (C's `strtol`
    /// family, any base `strtol` takes, ranges checked; `bool` is `true` or `false`); a
    /// `char` reads as an `int16`, which is what xfconfd sends for it. `nil` when the text
    /// is not a value of the type, or the type is not a scalar's (`array`, `empty`, `float`
    /// and unknown names).
    public init?(fileType type: String, text: String) {
        guard !text.isEmpty else {
            if type == "string" { self = .string("") } else { return nil }
            return
        }
        switch type {
        case "string": self = .string(text)
        case "bool":
            switch text {
            case "true": self = .bool(true)
            case "false": self = .bool(false)
            default: return nil
            }
        case "int": guard let number = Self.signed(text, in: Int64(Int32.min)...Int64(Int32.max)) else { return nil }; self = .int32(Int32(number))
        case "uint": guard let number = Self.unsigned(text, max: Int64(UInt32.max)) else { return nil }; self = .uint32(UInt32(number))
        case "uchar": guard let number = Self.unsigned(text, max: Int64(UInt8.max)) else { return nil }; self = .uchar(UInt8(number))
        case "char": guard let number = Self.signed(text, in: Int64(Int8.min)...Int64(Int8.max)) else { return nil }; self = .int16(Int16(number))
        case "int16": guard let number = Self.signed(text, in: Int64(Int16.min)...Int64(Int16.max)) else { return nil }; self = .int16(Int16(number))
        case "uint16": guard let number = Self.signed(text, in: 0...Int64(UInt16.max)) else { return nil }; self = .uint16(UInt16(number))
        case "int64":
            guard let number = Self.convert(text, { g_ascii_strtoll($0, $1, 0) }) else { return nil }
            self = .int64(Int64(number))
        case "uint64":
            guard let number = Self.convert(text, { g_ascii_strtoull($0, $1, 0) }) else { return nil }
            self = .uint64(UInt64(number))
        case "double":
            guard let number = Self.convert(text, { g_ascii_strtod($0, $1) }) else { return nil }
            self = .double(number)
        default: return nil
        }
    }

    /// `text` through C's `strtol`, in `range`.
    private static func signed(_ text: String, in range: ClosedRange<Int64>) -> Int64? {
        guard let number = convert(text, { strtol($0, $1, 0) }), range.contains(Int64(number)) else { return nil }
        return Int64(number)
    }

    /// `text` through C's `strtoul`, taken as a signed 64-bit number as xfconfd takes it
    /// (so `-1` is below 0, not a large number), in `0...max`.
    private static func unsigned(_ text: String, max: Int64) -> Int64? {
        guard let number = convert(text, { strtoul($0, $1, 0) }) else { return nil }
        let signed = Int64(bitPattern: UInt64(number))
        return (0...max).contains(signed) ? signed : nil
    }

    /// `text` converted by `convert` (a C conversion with an end pointer), when the whole
    /// text was used and the conversion did not fail with `ERANGE` at 0, as xfconfd checks.
    private static func convert<T: Numeric>(
        _ text: String, _ convert: (UnsafePointer<CChar>, UnsafeMutablePointer<UnsafeMutablePointer<CChar>?>) -> T
    ) -> T? {
        text.withCString { start -> T? in
            var end: UnsafeMutablePointer<CChar>?
            errno = 0
            let number = convert(start, &end)
            if number == 0, errno == ERANGE { return nil }
            guard let end, end.pointee == 0 else { return nil }
            return number
        }
    }
}
