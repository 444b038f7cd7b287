import PreferencesModel

/// An xfconf channel, stored in prefsd as the domain `xfconf.` followed by its name: the
/// channel `xfwm4` is the domain `xfconf.xfwm4`.
///
/// xfconfd accepts a channel name of any length made of `A-Z a-z 0-9 _ - . , : | [ ] { }`.
/// prefsd's domain names (``DomainName``) carry only `A-Z a-z 0-9 . _ -` and at most 255
/// bytes, so a channel name is also refused, with xfconfd's `InvalidChannel`, when it
/// contains any of `, : | [ ] { }` or is longer than ``maximumLength`` (255 less the
/// prefix's 7) bytes. No channel that Xfce's own programs use is refused.
public struct XfconfChannel: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The channel's name, as xfconf's clients spell it.
    public let name: String

    /// What every channel's domain name starts with: no application's own domain does.
    public static let domainPrefix = "xfconf."
    /// The longest channel name prefsd carries, in bytes: a domain name's 255 less the prefix.
    public static let maximumLength = 255 - 7

    /// The channel named `name`.
    /// - Throws: `XfconfError.invalidChannel` saying which rule the name breaks.
    public init(_ name: String) throws(XfconfError) {
        if let reason = Self.problem(with: name) { throw .invalidChannel(name, reason: reason) }
        self.name = name
    }

    /// The channel whose domain is `domain`, or `nil` when `domain` is no channel's.
    public init?(domain: DomainName) {
        guard domain.rawValue.hasPrefix(Self.domainPrefix) else { return nil }
        let name = String(domain.rawValue.dropFirst(Self.domainPrefix.utf8.count))
        guard Self.problem(with: name) == nil else { return nil }
        self.name = name
    }

    /// The prefsd domain that holds the channel's properties.
    public var domain: DomainName {
        // A name that passed `problem(with:)` makes a valid domain name.
        (try? DomainName(Self.domainPrefix + name))!
    }

    /// Whether `domain` is in the `xfconf.` namespace, which only the xfconf front writes
    /// as channels: no application ID owns it.
    public static func isChannelDomain(_ domain: String) -> Bool {
        domain.hasPrefix(domainPrefix)
    }

    /// What is wrong with `name` as a channel name, or `nil` when prefsd carries it.
    public static func problem(with name: String) -> String? {
        let bytes = name.utf8
        if bytes.isEmpty { return "it is empty" }
        for byte in bytes where !isDomainByte(byte) {
            if isXfconfOnlyByte(byte) {
                return "it contains \"\(Character(UnicodeScalar(byte)))\", which xfconfd allows but prefsd's domain names cannot carry"
            }
            return "it contains a character other than the ASCII letters, digits and _ - . , : | [ ] { }"
        }
        if bytes.count > maximumLength {
            return "it is \(bytes.count) bytes long, over prefsd's limit of \(maximumLength)"
        }
        return nil
    }

    /// The bytes both xfconfd's channel names and prefsd's domain names allow.
    static func isDomainByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default: false
        }
    }

    /// The bytes xfconfd's channel names allow beyond those of prefsd's domain names.
    private static func isXfconfOnlyByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "|"), UInt8(ascii: "["), UInt8(ascii: "]"),
            UInt8(ascii: "{"), UInt8(ascii: "}"):
            true
        default: false
        }
    }

    /// The channel's name.
    public var description: String { name }

    /// Orders channels by name, as `ListChannels` and the channel files' folder list them.
    public static func < (lhs: XfconfChannel, rhs: XfconfChannel) -> Bool { lhs.name < rhs.name }
}
