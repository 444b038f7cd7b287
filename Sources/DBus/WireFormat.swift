internal import CDBus

/// Marshals a ``DBusMessage`` into the D-Bus wire format (little-endian) in pure Swift, for
/// `dbus_message_demarshal`.
///
/// libdbus builds a message's body argument by argument and rewrites the header's signature
/// field after each top-level one, so a body of several arguments (a `Changed` signal,
/// `s a{sv} as as`) costs fewer instructions marshalled here and demarshalled (which
/// validates it all again: a slip here is refused there, never sent). A one-argument reply
/// is cheaper the libdbus way, so ``MessageEncoder`` uses this path for bodies of
/// ``minimumArguments`` or more. The instruction counts are in docs/benchmarks.md.
enum WireFormat {
    /// The fewest top-level arguments for which marshalling here beats libdbus's builder.
    static let minimumArguments = 2

    /// The serial the marshalled message carries: libdbus refuses 0 when demarshalling, and
    /// keeps a non-zero serial when sending, so the encoder sets it back to 0 afterwards.
    static let placeholderSerial: UInt32 = 1

    /// The header field codes of the specification.
    private enum Field: UInt8 {
        case path = 1
        case interface = 2
        case member = 3
        case errorName = 4
        case replySerial = 5
        case destination = 6
        case sender = 7
        case signature = 8
    }

    /// The whole message: fixed header, header fields, padding, body. The values must have
    /// been validated (``ValueValidator``).
    static func marshal(_ message: DBusMessage) -> [UInt8] {
        var body = Writer()
        for value in message.body { body.append(value) }
        let signature = message.body.map(\.signatureText).joined()

        var header = Writer()
        header.bytes.reserveCapacity(128 + body.bytes.count)
        header.byte(UInt8(ascii: "l"))
        header.byte(typeCode(message.kind))
        var flags: UInt8 = 0
        if message.noReplyExpected { flags |= 0x1 }
        if !message.autoStart { flags |= 0x2 }
        header.byte(flags)
        header.byte(1)
        header.uint32(UInt32(body.bytes.count))
        header.uint32(placeholderSerial)
        header.array(alignment: 8) { fields in
            func field(_ code: Field, _ type: UInt8, _ write: (inout Writer) -> Void) {
                fields.align(8)
                fields.byte(code.rawValue)
                fields.byte(1)
                fields.byte(type)
                fields.byte(0)
                write(&fields)
            }
            if let path = message.path { field(.path, UInt8(ascii: "o")) { $0.string(path) } }
            if let interface = message.interface { field(.interface, UInt8(ascii: "s")) { $0.string(interface) } }
            if let member = message.member { field(.member, UInt8(ascii: "s")) { $0.string(member) } }
            if let errorName = message.errorName { field(.errorName, UInt8(ascii: "s")) { $0.string(errorName) } }
            if let replySerial = message.replySerial { field(.replySerial, UInt8(ascii: "u")) { $0.uint32(replySerial) } }
            if let destination = message.destination { field(.destination, UInt8(ascii: "s")) { $0.string(destination) } }
            if let sender = message.sender { field(.sender, UInt8(ascii: "s")) { $0.string(sender) } }
            if !signature.isEmpty { field(.signature, UInt8(ascii: "g")) { $0.signature(signature) } }
        }
        header.align(8)
        header.bytes.append(contentsOf: body.bytes)
        return header.bytes
    }

    /// The message as a new libdbus message with serial 0 (to be given one when sent), or
    /// nil when libdbus refuses the bytes or is out of memory (the caller builds it the
    /// libdbus way instead).
    static func demarshal(_ message: DBusMessage) -> OpaquePointer? {
        let bytes = marshal(message)
        guard bytes.count <= Int(Int32.max) else { return nil }
        let error = CErrorBox()
        let pointer = bytes.withUnsafeBufferPointer { buffer in
            buffer.withMemoryRebound(to: CChar.self) { chars in
                dbus_message_demarshal(chars.baseAddress, Int32(chars.count), error.pointer)
            }
        }
        guard let pointer else { return nil }
        dbus_message_set_serial(pointer, 0)
        return pointer
    }

    private static func typeCode(_ kind: DBusMessage.Kind) -> UInt8 {
        switch kind {
        case .methodCall: 1
        case .methodReturn: 2
        case .error: 3
        case .signal: 4
        }
    }

    /// Appends marshalled values; offsets are counted from the start of `bytes`, which is
    /// where alignment is counted from (a message's start, or its 8-aligned body's).
    struct Writer {
        var bytes: [UInt8] = []

        mutating func align(_ boundary: Int) {
            let padding = (boundary - bytes.count % boundary) % boundary
            if padding > 0 { bytes.append(contentsOf: repeatElement(0, count: padding)) }
        }

        mutating func byte(_ value: UInt8) { bytes.append(value) }

        mutating func uint16(_ value: UInt16) {
            align(2)
            bytes.append(UInt8(truncatingIfNeeded: value))
            bytes.append(UInt8(truncatingIfNeeded: value >> 8))
        }

        mutating func uint32(_ value: UInt32) {
            align(4)
            for shift in stride(from: 0, to: 32, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt32(shift))) }
        }

        mutating func uint64(_ value: UInt64) {
            align(8)
            for shift in stride(from: 0, to: 64, by: 8) { bytes.append(UInt8(truncatingIfNeeded: value >> UInt64(shift))) }
        }

        /// `s` or `o`: length, bytes, NUL.
        mutating func string(_ text: String) {
            var text = text
            text.withUTF8 { utf8 in
                uint32(UInt32(utf8.count))
                bytes.append(contentsOf: utf8)
            }
            bytes.append(0)
        }

        /// `g`: one-byte length, bytes, NUL.
        mutating func signature(_ text: String) {
            bytes.append(UInt8(truncatingIfNeeded: text.utf8.count))
            bytes.append(contentsOf: text.utf8)
            bytes.append(0)
        }

        /// An array: its length, padding to the elements' alignment, the elements.
        mutating func array(alignment: Int, _ elements: (inout Writer) -> Void) {
            uint32(0)
            let lengthAt = bytes.count - 4
            align(alignment)
            let start = bytes.count
            elements(&self)
            let length = UInt32(bytes.count - start)
            for index in 0..<4 { bytes[lengthAt + index] = UInt8(truncatingIfNeeded: length >> UInt32(8 * index)) }
        }

        mutating func append(_ value: DBusValue) {
            switch value {
            case .byte(let v): byte(v)
            case .boolean(let v): uint32(v ? 1 : 0)
            case .int16(let v): uint16(UInt16(bitPattern: v))
            case .uint16(let v): uint16(v)
            case .int32(let v): uint32(UInt32(bitPattern: v))
            case .uint32(let v): uint32(v)
            case .int64(let v): uint64(UInt64(bitPattern: v))
            case .uint64(let v): uint64(v)
            case .double(let v): uint64(v.bitPattern)
            case .string(let s), .objectPath(let s): string(s)
            case .signature(let s): signature(s)
            case .unixFD: uint32(0)  // refused by the validator before this runs
            case .bytes(let b):
                uint32(UInt32(b.count))
                bytes.append(contentsOf: b)
            case .array(let element, let items):
                array(alignment: DBusValue.alignment(of: element.rawValue)) { writer in
                    for item in items { writer.append(item) }
                }
            case .dictEntry(let key, let entryValue):
                align(8)
                append(key)
                append(entryValue)
            case .structure(let fields):
                align(8)
                for field in fields { append(field) }
            case .variant(let inner):
                signature(inner.signatureText)
                append(inner)
            }
        }
    }
}
