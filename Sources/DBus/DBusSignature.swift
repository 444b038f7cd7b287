internal import CDBus

/// A D-Bus type signature such as `"s"`, `"a{sv}"` or `"(dd)"`.
///
/// Created with ``init(_:)`` it is validated by libdbus. Created from a string literal it is not
/// validated at once; an invalid literal is refused with ``DBusError/invalidMessage(_:)`` when a
/// message that uses it is encoded.
public struct DBusSignature: Sendable, Hashable, CustomStringConvertible, ExpressibleByStringLiteral {
    /// The signature text.
    public let rawValue: String

    /// Validates `rawValue` with `dbus_signature_validate` (any sequence of complete types,
    /// including the empty signature).
    public init(_ rawValue: String) throws(DBusError) {
        if let reason = validationFailure(rawValue, { dbus_signature_validate($0, $1) }) {
            throw .invalidMessage("\"\(rawValue)\" is not a valid D-Bus signature: \(reason)")
        }
        self.rawValue = rawValue
    }

    /// A signature from a literal; validated when used in a message (see the type's notes).
    public init(stringLiteral value: String) {
        self.rawValue = value
    }

    /// Trusted constructor for signatures this module computes itself.
    init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// The signature text.
    public var description: String { rawValue }

    /// Whether this is exactly one complete type (`dbus_signature_validate_single`).
    public var isSingleCompleteType: Bool {
        validationFailure(rawValue, { dbus_signature_validate_single($0, $1) }) == nil
    }

    /// `y`
    public static let byte = DBusSignature(unchecked: "y")
    /// `b`
    public static let boolean = DBusSignature(unchecked: "b")
    /// `n`
    public static let int16 = DBusSignature(unchecked: "n")
    /// `q`
    public static let uint16 = DBusSignature(unchecked: "q")
    /// `i`
    public static let int32 = DBusSignature(unchecked: "i")
    /// `u`
    public static let uint32 = DBusSignature(unchecked: "u")
    /// `x`
    public static let int64 = DBusSignature(unchecked: "x")
    /// `t`
    public static let uint64 = DBusSignature(unchecked: "t")
    /// `d`
    public static let double = DBusSignature(unchecked: "d")
    /// `s`
    public static let string = DBusSignature(unchecked: "s")
    /// `o`
    public static let objectPath = DBusSignature(unchecked: "o")
    /// `g`
    public static let signature = DBusSignature(unchecked: "g")
    /// `h`
    public static let unixFD = DBusSignature(unchecked: "h")
    /// `v`
    public static let variant = DBusSignature(unchecked: "v")
    /// `ay`
    public static let bytes = DBusSignature(unchecked: "ay")
    /// `as`
    public static let stringArray = DBusSignature(unchecked: "as")
    /// `av`
    public static let variantArray = DBusSignature(unchecked: "av")
    /// `{sv}`, the element of a string-keyed dictionary of variants
    public static let stringVariantEntry = DBusSignature(unchecked: "{sv}")
    /// `a{sv}`
    public static let stringVariantDictionary = DBusSignature(unchecked: "a{sv}")
}
