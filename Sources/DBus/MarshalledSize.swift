/// Alignment rules of the D-Bus wire format, in pure Swift.
extension DBusValue {
    /// Bytes this value would take marshalled in a message body starting at offset 0, alignment
    /// padding included (D-Bus specification, "Marshaling").
    public var marshalledSize: Int {
        marshalledEnd(from: 0)
    }

    /// The offset just after this value when marshalled starting at `offset`.
    func marshalledEnd(from offset: Int) -> Int {
        switch self {
        case .byte: return offset + 1
        case .boolean, .int32, .uint32, .unixFD: return align(offset, 4) + 4
        case .int16, .uint16: return align(offset, 2) + 2
        case .int64, .uint64, .double: return align(offset, 8) + 8
        case .string(let s), .objectPath(let s): return align(offset, 4) + 4 + s.utf8.count + 1
        case .signature(let s): return offset + 1 + s.utf8.count + 1
        case .bytes(let b): return align(offset, 4) + 4 + b.count
        case .array(let element, let items):
            // Length, then padding to the element's alignment even when empty.
            var end = align(align(offset, 4) + 4, Self.alignment(of: element.rawValue))
            for item in items { end = item.marshalledEnd(from: end) }
            return end
        case .dictEntry(let key, let value):
            return value.marshalledEnd(from: key.marshalledEnd(from: align(offset, 8)))
        case .structure(let fields):
            var end = align(offset, 8)
            for field in fields { end = field.marshalledEnd(from: end) }
            return end
        case .variant(let inner):
            let signatureEnd = offset + 1 + inner.signatureText.utf8.count + 1
            return inner.marshalledEnd(from: signatureEnd)
        }
    }

    /// The alignment of the first type in `signature`.
    static func alignment(of signature: String) -> Int {
        switch signature.utf8.first {
        case UInt8(ascii: "n"), UInt8(ascii: "q"): return 2
        case UInt8(ascii: "b"), UInt8(ascii: "i"), UInt8(ascii: "u"), UInt8(ascii: "h"),
            UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "a"):
            return 4
        case UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "("),
            UInt8(ascii: "{"):
            return 8
        default: return 1  // y, g, v
        }
    }
}

private func align(_ offset: Int, _ boundary: Int) -> Int {
    (offset + boundary - 1) / boundary * boundary
}
