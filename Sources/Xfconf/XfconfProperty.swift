import PreferencesModel

/// An xfconf property name, `/a/b`, stored in prefsd as the key `a/b` of its channel's domain.
///
/// xfconfd's rule: `/`, then one or more names of `A-Z a-z 0-9 _ - . , : | [ ] { } < >`
/// separated by single `/`s, not ending in `/`. A property name longer than a prefsd key
/// (``PreferenceKey/maximumLength`` bytes after the leading `/`) is refused too, with
/// xfconfd's `InvalidProperty`.
public struct XfconfProperty: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The property's name as xfconf's clients spell it: `/general/theme`.
    public let path: String

    /// The property named `path`.
    /// - Throws: `XfconfError.invalidProperty` saying which rule the name breaks.
    public init(_ path: String) throws(XfconfError) {
        if let reason = Self.problem(with: path) { throw .invalidProperty(path, reason: reason) }
        self.path = path
    }

    /// The property stored under the prefsd key `key` (`general/theme`), or `nil` when the
    /// key names no property (keys written through prefsd's own interface may not).
    public init?(key: String) {
        let path = "/" + key
        guard Self.problem(with: path) == nil else { return nil }
        self.path = path
    }

    /// The prefsd key that holds the property's value: the name without its leading `/`.
    public var key: String { String(path.dropFirst()) }

    /// The names along the path: `["general", "theme"]` for `/general/theme`.
    public var components: [Substring] { path.dropFirst().split(separator: "/", omittingEmptySubsequences: false) }

    /// Whether `other` is this property or one below it (`/a` holds `/a` and `/a/b`, not
    /// `/ab`), as xfconfd's recursive `ResetProperty` removes them.
    public func holds(_ other: XfconfProperty) -> Bool {
        other.path == path || (other.path.hasPrefix(path) && other.path.utf8.dropFirst(path.utf8.count).first == UInt8(ascii: "/"))
    }

    /// What is wrong with `path` as a property name, or `nil` when it is valid; xfconfd's
    /// messages where it has one.
    public static func problem(with path: String) -> String? {
        let bytes = Array(path.utf8)
        guard bytes.first == UInt8(ascii: "/") else { return "property names must start with a '/' character" }
        guard bytes.count > 1 else { return "the root element ('/') is not a valid property name" }
        var previous = UInt8(ascii: "/")
        for byte in bytes.dropFirst() {
            guard isAllowed(byte) else {
                return
                    "property names can only include the ASCII characters A-Z, a-z, 0-9, '_', '-', ':', '.', ',', '|', '[', ']', '{', '}', '<' and '>', as well as '/' as a separator"
            }
            if byte == UInt8(ascii: "/"), previous == UInt8(ascii: "/") {
                return "property names cannot have two or more consecutive '/' characters"
            }
            previous = byte
        }
        if previous == UInt8(ascii: "/") { return "property names cannot end with a '/' character" }
        if bytes.count - 1 > PreferenceKey.maximumLength {
            return "it is \(bytes.count) bytes long, over prefsd's limit of \(PreferenceKey.maximumLength + 1)"
        }
        return nil
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        if XfconfChannel.isDomainByte(byte) { return true }
        switch byte {
        case UInt8(ascii: "/"), UInt8(ascii: "{"), UInt8(ascii: "}"), UInt8(ascii: "<"), UInt8(ascii: ">"), UInt8(ascii: "|"),
            UInt8(ascii: ","), UInt8(ascii: "["), UInt8(ascii: "]"), UInt8(ascii: ":"):
            return true
        default: return false
        }
    }

    /// The property's name.
    public var description: String { path }

    /// Orders properties by name.
    public static func < (lhs: XfconfProperty, rhs: XfconfProperty) -> Bool { lhs.path < rhs.path }
}
