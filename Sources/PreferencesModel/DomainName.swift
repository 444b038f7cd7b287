import Foundation

/// The name of a preferences domain: `com.example.Editor`, or `NSGlobalDomain`.
///
/// A valid name is 1–255 bytes of `A-Z a-z 0-9 . _ -` and does not start with `.` or `-`,
/// so no name can climb out of a directory or hide a path separator.
public struct DomainName: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// The name as text.
    public let rawValue: String

    /// The global domain, searched by every application after its own.
    public static let global = DomainName(unchecked: "NSGlobalDomain")
    /// The registration domain's conventional name (never stored by the service).
    public static let registration = DomainName(unchecked: "NSRegistrationDomain")
    /// The argument domain's conventional name (never stored by the service).
    public static let argument = DomainName(unchecked: "NSArgumentDomain")

    /// Validates `rawValue` as a domain name.
    /// - Throws: `PreferencesModelError.invalidDomainName` saying what is wrong.
    public init(_ rawValue: String) throws(PreferencesModelError) {
        if let reason = Self.problem(with: rawValue) {
            throw .invalidDomainName(rawValue, reason: reason)
        }
        self.rawValue = rawValue
    }

    private init(unchecked rawValue: String) {
        self.rawValue = rawValue
    }

    /// What is wrong with `name` as a domain name, or `nil` when it is valid.
    public static func problem(with name: String) -> String? {
        let bytes = name.utf8
        if bytes.isEmpty { return "it is empty" }
        if bytes.count > 255 { return "it is \(bytes.count) bytes long, over the limit of 255" }
        if let first = bytes.first, first == UInt8(ascii: ".") || first == UInt8(ascii: "-") {
            return "it starts with \"\(Character(UnicodeScalar(first)))\""
        }
        for byte in bytes where !isAllowed(byte) {
            if byte == UInt8(ascii: "/") { return "it contains \"/\"" }
            if byte == 0 { return "it contains a NUL byte" }
            return "it contains a character other than A-Z a-z 0-9 . _ -"
        }
        return nil
    }

    private static func isAllowed(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"),
            UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    /// The name as text.
    public var description: String { rawValue }

    /// Orders names by their bytes, as `Domains` sorts them. A name is ASCII only, so
    /// String's own order (by Unicode scalar, with a memcmp fast path for ASCII) is the
    /// byte order, and 100,000 names sort in a fraction of a second even unoptimized.
    public static func < (lhs: DomainName, rhs: DomainName) -> Bool {
        lhs.rawValue < rhs.rawValue
    }
}

/// Validation of preference keys.
public enum PreferenceKey {
    /// The longest key, in UTF-8 bytes.
    public static let maximumLength = 1024

    /// What is wrong with `key`, or `nil` when it is a valid key
    /// (1–1024 bytes of UTF-8, no NUL).
    public static func problem(with key: String) -> String? {
        let count = key.utf8.count
        if count == 0 { return "it is empty" }
        if count > maximumLength { return "it is \(count) bytes long, over the limit of \(maximumLength)" }
        if key.utf8.contains(0) { return "it contains a NUL byte" }
        return nil
    }

    /// `key` in Unicode normalization form C, the one spelling a key is stored under.
    ///
    /// Swift compares strings by canonical equivalence, so two spellings of "é" are one key
    /// in a dictionary: they must be one row on disk too. ASCII keys, the usual case, are
    /// returned as they are without calling into Foundation.
    public static func normalized(_ key: String) -> String {
        key.utf8.allSatisfy { $0 < 0x80 } ? key : key.precomposedStringWithCanonicalMapping
    }

    /// Checks `key`.
    /// - Throws: `PreferencesModelError.invalidKey` saying what is wrong.
    public static func validate(_ key: String) throws(PreferencesModelError) {
        if let reason = problem(with: key) { throw .invalidKey(key, reason: reason) }
    }
}
