import StandardExtras

#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// Two D-Bus values are equal when they would travel as the same bytes: the same type and
/// the same bits. Strings, object paths and signatures compare by their UTF-8 bytes (not by
/// Unicode canonical equivalence, as Swift's `String ==` does), doubles by their bit
/// pattern (`-0.0` is not `0.0`; a NaN equals a NaN of the same bits), containers element
/// by element. Hashing agrees with it.
extension DBusValue {
    /// Whether two values are the same type and the same bits.
    public static func == (lhs: DBusValue, rhs: DBusValue) -> Bool {
        switch (lhs, rhs) {
        case (.byte(let a), .byte(let b)): a == b
        case (.boolean(let a), .boolean(let b)): a == b
        case (.int16(let a), .int16(let b)): a == b
        case (.uint16(let a), .uint16(let b)): a == b
        case (.int32(let a), .int32(let b)): a == b
        case (.uint32(let a), .uint32(let b)): a == b
        case (.int64(let a), .int64(let b)): a == b
        case (.uint64(let a), .uint64(let b)): a == b
        case (.double(let a), .double(let b)): a.bitPattern == b.bitPattern
        case (.string(let a), .string(let b)), (.objectPath(let a), .objectPath(let b)), (.signature(let a), .signature(let b)):
            a.hasSameBytes(as: b)
        case (.unixFD, .unixFD): true
        case (.bytes(let a), .bytes(let b)): a == b
        case (.array(let elementA, let a), .array(let elementB, let b)): elementA == elementB && a == b
        case (.dictEntry(let keyA, let valueA), .dictEntry(let keyB, let valueB)): keyA == keyB && valueA == valueB
        case (.structure(let a), .structure(let b)): a == b
        case (.variant(let a), .variant(let b)): a == b
        default: false
        }
    }

    /// Hashes the value's type and bits, consistently with ``==(_:_:)``.
    public func hash(into hasher: inout Hasher) {
        switch self {
        case .byte(let value): hasher.combine(0 as UInt8); hasher.combine(value)
        case .boolean(let value): hasher.combine(1 as UInt8); hasher.combine(value)
        case .int16(let value): hasher.combine(2 as UInt8); hasher.combine(value)
        case .uint16(let value): hasher.combine(3 as UInt8); hasher.combine(value)
        case .int32(let value): hasher.combine(4 as UInt8); hasher.combine(value)
        case .uint32(let value): hasher.combine(5 as UInt8); hasher.combine(value)
        case .int64(let value): hasher.combine(6 as UInt8); hasher.combine(value)
        case .uint64(let value): hasher.combine(7 as UInt8); hasher.combine(value)
        case .double(let value): hasher.combine(8 as UInt8); hasher.combine(value.bitPattern)
        case .string(let text): hasher.combine(9 as UInt8); Self.hashBytes(of: text, into: &hasher)
        case .objectPath(let text): hasher.combine(10 as UInt8); Self.hashBytes(of: text, into: &hasher)
        case .signature(let text): hasher.combine(11 as UInt8); Self.hashBytes(of: text, into: &hasher)
        case .unixFD: hasher.combine(12 as UInt8)
        case .bytes(let bytes): hasher.combine(13 as UInt8); hasher.combine(bytes)
        case .array(let element, let items): hasher.combine(14 as UInt8); hasher.combine(element); hasher.combine(items)
        case .dictEntry(let key, let value): hasher.combine(15 as UInt8); hasher.combine(key); hasher.combine(value)
        case .structure(let fields): hasher.combine(16 as UInt8); hasher.combine(fields)
        case .variant(let inner): hasher.combine(17 as UInt8); hasher.combine(inner)
        }
    }

    private static func hashBytes(of text: String, into hasher: inout Hasher) {
        var text = text
        hasher.combine(text.utf8.count)
        text.withUTF8 { hasher.combine(bytes: UnsafeRawBufferPointer($0)) }
    }
}
