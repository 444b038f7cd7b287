internal import CDBus
import Synchronization

/// Checks a message completely before anything is appended, so that libdbus never sees input
/// that would make it abort the process.
enum ValueValidator {
    /// Containers (arrays, structs, dict entries, variants) nested deeper than this are refused;
    /// the receiving libdbus rejects messages beyond 64.
    static let maximumDepth = 64

    /// Validates the header fields that `message` will carry; the destination only with
    /// `checkingDestination` (a reply built from a received call gets the call's sender,
    /// which libdbus validated on receipt).
    static func validateHeader(_ message: DBusMessage, checkingDestination: Bool = true) throws(DBusError) {
        switch message.kind {
        case .methodCall:
            guard let path = message.path else { throw .invalidMessage("a method call needs an object path") }
            try check(path, "object path") { dbus_validate_path($0, $1) }
            guard message.member != nil else { throw .invalidMessage("a method call needs a member name") }
        case .signal:
            guard let path = message.path else { throw .invalidMessage("a signal needs an object path") }
            try check(path, "object path") { dbus_validate_path($0, $1) }
            guard message.interface != nil else { throw .invalidMessage("a signal needs an interface") }
            guard message.member != nil else { throw .invalidMessage("a signal needs a member name") }
        case .error:
            guard let name = message.errorName else { throw .invalidMessage("an error reply needs an error name") }
            try check(name, "error name") { dbus_validate_error_name($0, $1) }
            guard message.replySerial != nil else { throw .invalidMessage("an error reply needs a reply serial") }
        case .methodReturn:
            guard message.replySerial != nil else { throw .invalidMessage("a method return needs a reply serial") }
        }
        if message.replySerial == 0 { throw .invalidMessage("a reply serial cannot be 0") }
        if let interface = message.interface {
            try check(interface, "interface name") { dbus_validate_interface($0, $1) }
        }
        if let member = message.member {
            try check(member, "member name") { dbus_validate_member($0, $1) }
        }
        if checkingDestination, let destination = message.destination {
            try check(destination, "bus name") { dbus_validate_bus_name($0, $1) }
        }
    }

    /// The largest array the protocol allows, in bytes (64 MiB).
    static let maximumArrayLength = 64 * 1024 * 1024

    /// The largest message the protocol allows, in bytes (128 MiB).
    static let maximumMessageLength = 128 * 1024 * 1024

    /// Validates a whole body.
    static func validate(body: [DBusValue]) throws(DBusError) {
        var end = 0
        for value in body { end = value.marshalledEnd(from: end) }
        if end > maximumMessageLength {
            throw .invalidMessage("the body is larger than the D-Bus limit of 128 MiB")
        }
        let checkArrays = arraysMayBeTooLong(bodyBytes: end)
        for value in body { try validate(value, checkingArraySizes: checkArrays) }
    }

    /// Validates one top-level body value.
    static func validate(_ value: DBusValue) throws(DBusError) {
        try validate(value, checkingArraySizes: arraysMayBeTooLong(bodyBytes: value.marshalledSize))
    }

    /// Whether an array inside a body of `bodyBytes` bytes (marshalled) can pass the array
    /// limit as the validator measures it (``DBusValue/marshalledSize`` of the array alone,
    /// from offset 0). Alignment padding is less than 8 bytes and precedes a value of at
    /// least 1 byte, so an array measured alone takes at most 8 times the bytes it takes in
    /// its body: at most an eighth of the limit, no array needs measuring (each measure walks
    /// the whole array again, every dictionary of a reply or signal).
    private static func arraysMayBeTooLong(bodyBytes: Int) -> Bool {
        bodyBytes > maximumArrayLength / 8
    }

    private static func validate(_ value: DBusValue, checkingArraySizes: Bool) throws(DBusError) {
        try checkSingleType(value)
        try validate(value, depth: 0, checkingArraySizes: checkingArraySizes)
    }

    private static func validate(_ value: DBusValue, depth: Int, checkingArraySizes: Bool) throws(DBusError) {
        switch value {
        case .byte, .boolean, .int16, .uint16, .int32, .uint32, .int64, .uint64, .double:
            return
        case .string(let s):
            if containsNUL(s) { throw .invalidMessage("a string argument contains a NUL character") }
        case .objectPath(let p):
            try check(p, "object path") { dbus_validate_path($0, $1) }
        case .signature(let g):
            try check(g, "signature") { dbus_signature_validate($0, $1) }
        case .unixFD:
            throw .invalidMessage("file descriptors (type h) cannot be sent")
        case .bytes(let bytes):
            try checkDepth(depth + 1)
            if bytes.count > maximumArrayLength {
                throw .invalidMessage("a byte array is longer than the D-Bus limit of 64 MiB")
            }
        case .array(let element, let items):
            try checkDepth(depth + 1)
            try checkArrayElement(element.rawValue)
            // Each element's type compared with the element signature in place (building
            // each element's signature string took an allocation or more per element).
            if let stray = element.firstNonConforming(items) {
                throw .invalidMessage(
                    "an array of \"\(element.rawValue)\" holds an element of type \"\(stray.signatureText)\"")
            }
            for item in items {
                if case .dictEntry(let key, let entryValue) = item {
                    // Dict entries are valid here, and only here.
                    try checkDepth(depth + 2)
                    try validate(key, depth: depth + 2, checkingArraySizes: checkingArraySizes)
                    try validate(entryValue, depth: depth + 2, checkingArraySizes: checkingArraySizes)
                } else {
                    try validate(item, depth: depth + 1, checkingArraySizes: checkingArraySizes)
                }
            }
            // Length word plus padding to 8 at most, then the elements.
            if checkingArraySizes, value.marshalledSize > maximumArrayLength + 8 {
                throw .invalidMessage("an array is longer than the D-Bus limit of 64 MiB")
            }
        case .dictEntry:
            throw .invalidMessage("a dictionary entry can only be an element of an array")
        case .structure(let fields):
            try checkDepth(depth + 1)
            if fields.isEmpty { throw .invalidMessage("a struct needs at least one field") }
            for field in fields { try validate(field, depth: depth + 1, checkingArraySizes: checkingArraySizes) }
        case .variant(let inner):
            try checkDepth(depth + 1)
            try checkSingleType(inner)
            try validate(inner, depth: depth + 1, checkingArraySizes: checkingArraySizes)
        }
    }

    /// Checks that `value`'s signature is a single complete type, but for arrays, whose
    /// element type ``validate(_:depth:checkingArraySizes:)`` checks
    /// (``checkArrayElement(_:)``) without building their signature.
    private static func checkSingleType(_ value: DBusValue) throws(DBusError) {
        switch value {
        case .array, .bytes: return
        default: try checkSingleSignature(value.signatureText)
        }
    }

    /// Checks that `a` + `element` is a single complete type: an array of a basic type or
    /// of variants always is (no string is built for it); other element types are checked
    /// as ``checkSingleSignature(_:)`` checks them.
    private static func checkArrayElement(_ element: String) throws(DBusError) {
        if isOneLetterType(element) { return }
        try checkSingleSignature("a" + element)
    }

    private static func checkDepth(_ depth: Int) throws(DBusError) {
        if depth > maximumDepth {
            throw .invalidMessage("containers are nested more than \(maximumDepth) deep")
        }
    }

    private static func checkSingleSignature(_ signature: String) throws(DBusError) {
        // A one-letter basic type or `v` (every scalar reply, every variant of a scalar) is
        // a single complete type: spare the C call and its string bridging on every reply.
        // Anything longer goes to libdbus.
        if isOneLetterType(signature) { return }
        // A signature libdbus accepted once is accepted again without asking: a `Changed`
        // signal asks about `a{sv}` and `as` six times a write.
        if acceptedSignatures.withLock({ $0.contains(signature) }) { return }
        if let reason = libdbusSingleSignatureFailure(signature) {
            throw .invalidMessage("\"\(signature)\" is not a valid single complete type: \(reason)")
        }
        acceptedSignatures.withLock { accepted in
            if accepted.count >= acceptedSignatureLimit { accepted.removeAll(keepingCapacity: true) }
            accepted.insert(signature)
        }
    }

    /// Container signatures libdbus accepted as single complete types, kept for
    /// ``checkSingleSignature(_:)``; emptied when ``acceptedSignatureLimit`` is reached, so a
    /// peer sending ever new signatures costs bounded memory.
    private static let acceptedSignatures = Mutex<Set<String>>([])

    /// The most signatures ``acceptedSignatures`` keeps.
    static let acceptedSignatureLimit = 256

    /// The signatures remembered as accepted now (for tests: the memory and its bound).
    static var rememberedSignatures: Set<String> { acceptedSignatures.withLock { $0 } }

    /// Why libdbus refuses `signature` as a single complete type, or nil when it accepts it.
    static func libdbusSingleSignatureFailure(_ signature: String) -> String? {
        validationFailure(signature, { dbus_signature_validate_single($0, $1) })
    }

    /// Whether `signature` is exactly one basic type code or `v`, each a single complete type.
    static func isOneLetterType(_ signature: String) -> Bool {
        var utf8 = signature.utf8.makeIterator()
        guard let code = utf8.next(), utf8.next() == nil else { return false }
        // The type codes y b n q i u x t d s o g h, and v (a switch: searching a string
        // literal's bytes costs far more, twice a Read).
        switch code {
        case UInt8(ascii: "y"), UInt8(ascii: "b"), UInt8(ascii: "n"), UInt8(ascii: "q"), UInt8(ascii: "i"), UInt8(ascii: "u"),
            UInt8(ascii: "x"), UInt8(ascii: "t"), UInt8(ascii: "d"), UInt8(ascii: "s"), UInt8(ascii: "o"), UInt8(ascii: "g"),
            UInt8(ascii: "h"), UInt8(ascii: "v"):
            return true
        default:
            return false
        }
    }

    private static func check(
        _ string: String, _ what: String,
        _ validate: (UnsafePointer<CChar>, UnsafeMutablePointer<CDBus.DBusError>?) -> dbus_bool_t
    ) throws(DBusError) {
        if let reason = validationFailure(string, validate) {
            throw .invalidMessage("\"\(string)\" is not a valid \(what): \(reason)")
        }
    }
}
