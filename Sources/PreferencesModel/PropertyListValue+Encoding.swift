import Foundation

/// The store's binary encoding of property-list values.
///
/// Layout: one format-version byte (`1`), then the value. Every value is one tag byte and
/// its payload:
///
/// | tag | value | payload |
/// | --- | --- | --- |
/// | `0x01` | string | varint byte count, UTF-8 bytes |
/// | `0x02` | integer | 8 bytes, little-endian two's complement |
/// | `0x03` | real | 8 bytes, little-endian IEEE 754 bit pattern (NaN payloads and -0.0 kept) |
/// | `0x04` / `0x05` | boolean false / true | none |
/// | `0x06` | data | varint byte count, bytes |
/// | `0x07` | date | 8 bytes, little-endian bit pattern of the seconds since 1970 |
/// | `0x08` | array | varint element count, elements |
/// | `0x09` | dictionary | varint entry count, then per entry: varint key byte count, UTF-8 key, value; keys sorted by their UTF-8 bytes |
///
/// Varints are unsigned LEB128 (7 bits a byte, least significant first), at most 10 bytes.
/// The encoding is deterministic: equal values encode to equal bytes.
extension PropertyListValue {
    /// The format version written as the first byte of every encoding.
    public static let encodingVersion: UInt8 = 1

    /// The deepest nesting of arrays and dictionaries that decoding accepts.
    public static let maximumDecodingDepth = 64

    /// The value in the store's compact, exact, versioned binary encoding.
    public func encoded() -> [UInt8] {
        var output: [UInt8] = []
        output.reserveCapacity(16)
        output.append(Self.encodingVersion)
        Codec.encode(self, into: &output)
        return output
    }

    /// Decodes a value written by ``encoded()``.
    ///
    /// - Throws: `PreferencesModelError.undecodableValue` when the bytes are truncated,
    ///   carry an unknown version or tag, hold invalid UTF-8 or a duplicate dictionary key,
    ///   nest deeper than ``maximumDecodingDepth``, or are followed by trailing bytes.
    public init(encoded bytes: UnsafeRawBufferPointer) throws(PreferencesModelError) {
        self = try Codec.decodeDocument(bytes)
    }

    /// Decodes a value written by ``encoded()``, from any collection of its bytes.
    ///
    /// - Throws: as ``init(encoded:)-(UnsafeRawBufferPointer)``.
    public init(encoded bytes: some Collection<UInt8>) throws(PreferencesModelError) {
        let decoded: Result<PropertyListValue, PreferencesModelError>? =
            bytes.withContiguousStorageIfAvailable { buffer in
                Result { () throws(PreferencesModelError) in
                    try Codec.decodeDocument(UnsafeRawBufferPointer(buffer))
                }
            }
        if let decoded {
            self = try decoded.get()
        } else {
            let copy = Array(bytes)
            let result = copy.withUnsafeBytes { buffer in
                Result { () throws(PreferencesModelError) in try Codec.decodeDocument(buffer) }
            }
            self = try result.get()
        }
    }
}

/// Tags and the encoder/decoder behind ``PropertyListValue/encoded()``.
private enum Codec {
    static let string: UInt8 = 0x01
    static let integer: UInt8 = 0x02
    static let real: UInt8 = 0x03
    static let booleanFalse: UInt8 = 0x04
    static let booleanTrue: UInt8 = 0x05
    static let data: UInt8 = 0x06
    static let date: UInt8 = 0x07
    static let array: UInt8 = 0x08
    static let dictionary: UInt8 = 0x09

    // MARK: Encoding

    static func encode(_ value: PropertyListValue, into output: inout [UInt8]) {
        switch value {
        case .string(let text):
            output.append(string)
            appendUTF8(text, to: &output)
        case .integer(let number):
            output.append(integer)
            appendFixed(UInt64(bitPattern: number), to: &output)
        case .real(let number):
            output.append(real)
            appendFixed(number.bitPattern, to: &output)
        case .boolean(let flag):
            output.append(flag ? booleanTrue : booleanFalse)
        case .data(let bytes):
            output.append(data)
            appendVarint(UInt64(bytes.count), to: &output)
            output.append(contentsOf: bytes)
        case .date(let seconds):
            output.append(date)
            appendFixed(seconds.bitPattern, to: &output)
        case .array(let items):
            output.append(array)
            appendVarint(UInt64(items.count), to: &output)
            for item in items { encode(item, into: &output) }
        case .dictionary(let items):
            output.append(dictionary)
            appendVarint(UInt64(items.count), to: &output)
            let sorted = items.sorted { $0.key.utf8.lexicographicallyPrecedes($1.key.utf8) }
            for (key, item) in sorted {
                appendUTF8(key, to: &output)
                encode(item, into: &output)
            }
        }
    }

    static func appendUTF8(_ text: String, to output: inout [UInt8]) {
        let utf8 = text.utf8
        appendVarint(UInt64(utf8.count), to: &output)
        output.append(contentsOf: utf8)
    }

    static func appendFixed(_ bits: UInt64, to output: inout [UInt8]) {
        withUnsafeBytes(of: bits.littleEndian) { output.append(contentsOf: $0) }
    }

    static func appendVarint(_ number: UInt64, to output: inout [UInt8]) {
        var rest = number
        while rest >= 0x80 {
            output.append(UInt8(truncatingIfNeeded: rest) | 0x80)
            rest >>= 7
        }
        output.append(UInt8(rest))
    }

    // MARK: Decoding

    static func decodeDocument(_ buffer: UnsafeRawBufferPointer) throws(PreferencesModelError) -> PropertyListValue {
        var reader = Reader(buffer: buffer)
        let version = try reader.byte()
        guard version == PropertyListValue.encodingVersion else {
            throw .undecodableValue(reason: "unknown encoding version \(version)")
        }
        let value = try reader.value(depth: 0)
        guard reader.position == buffer.count else {
            throw .undecodableValue(reason: "\(buffer.count - reader.position) trailing bytes after the value")
        }
        return value
    }

    /// A cursor over encoded bytes; every read checks the bounds first.
    struct Reader {
        let buffer: UnsafeRawBufferPointer
        var position = 0

        var remaining: Int { buffer.count - position }

        mutating func byte() throws(PreferencesModelError) -> UInt8 {
            guard position < buffer.count else { throw truncated() }
            defer { position += 1 }
            return buffer[position]
        }

        mutating func fixed() throws(PreferencesModelError) -> UInt64 {
            guard remaining >= 8 else { throw truncated() }
            let bits = buffer.loadUnaligned(fromByteOffset: position, as: UInt64.self)
            position += 8
            return UInt64(littleEndian: bits)
        }

        mutating func varint() throws(PreferencesModelError) -> UInt64 {
            var result: UInt64 = 0
            var shift: UInt64 = 0
            while true {
                let next = try byte()
                let payload = UInt64(next & 0x7f)
                if shift == 63, payload > 1 {
                    throw .undecodableValue(reason: "a length overflows 64 bits")
                }
                result |= payload << shift
                if next & 0x80 == 0 { return result }
                shift += 7
                if shift > 63 { throw .undecodableValue(reason: "a length overflows 64 bits") }
            }
        }

        /// A length or count that cannot exceed the bytes left (each item takes at least one).
        mutating func count(of what: String) throws(PreferencesModelError) -> Int {
            let number = try varint()
            guard number <= UInt64(remaining) else {
                throw .undecodableValue(reason: "truncated: \(what) of \(number) with \(remaining) bytes left")
            }
            return Int(number)
        }

        mutating func bytes(_ count: Int) -> UnsafeRawBufferPointer {
            defer { position += count }
            return UnsafeRawBufferPointer(rebasing: buffer[position..<position + count])
        }

        mutating func text() throws(PreferencesModelError) -> String {
            let length = try count(of: "a string length")
            let slice = bytes(length)
            guard let text = String(validating: slice, as: UTF8.self) else {
                throw .undecodableValue(reason: "a string is not valid UTF-8")
            }
            return text
        }

        mutating func value(depth: Int) throws(PreferencesModelError) -> PropertyListValue {
            let tag = try byte()
            switch tag {
            case Codec.string:
                return .string(try text())
            case Codec.integer:
                return .integer(Int64(bitPattern: try fixed()))
            case Codec.real:
                return .real(Double(bitPattern: try fixed()))
            case Codec.booleanFalse:
                return .boolean(false)
            case Codec.booleanTrue:
                return .boolean(true)
            case Codec.data:
                let length = try count(of: "a data length")
                return .data(Data(bytes(length)))
            case Codec.date:
                return .date(secondsSince1970: Double(bitPattern: try fixed()))
            case Codec.array:
                try checkDepth(depth + 1)
                let count = try count(of: "an array count")
                var items: [PropertyListValue] = []
                items.reserveCapacity(count)
                for _ in 0..<count { items.append(try value(depth: depth + 1)) }
                return .array(items)
            case Codec.dictionary:
                try checkDepth(depth + 1)
                let count = try count(of: "a dictionary count")
                var items: [String: PropertyListValue] = [:]
                items.reserveCapacity(count)
                for _ in 0..<count {
                    let key = try text()
                    let item = try value(depth: depth + 1)
                    if items.updateValue(item, forKey: key) != nil {
                        throw .undecodableValue(reason: "a dictionary repeats a key")
                    }
                }
                return .dictionary(items)
            default:
                throw .undecodableValue(reason: "unknown tag 0x\(String(tag, radix: 16)) at byte \(position - 1)")
            }
        }

        func checkDepth(_ depth: Int) throws(PreferencesModelError) {
            guard depth <= PropertyListValue.maximumDecodingDepth else {
                throw .undecodableValue(
                    reason: "arrays and dictionaries nest deeper than \(PropertyListValue.maximumDecodingDepth)")
            }
        }

        func truncated() -> PreferencesModelError {
            .undecodableValue(reason: "truncated after \(position) bytes")
        }
    }
}
