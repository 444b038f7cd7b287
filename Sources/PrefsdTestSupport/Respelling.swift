import PreferencesModel

/// Two values that Swift's `==` on `String` or `Double` calls equal and whose bytes differ
/// (contract 0.3: a write that differs in any byte is a change): a test argument, named
/// for the report.
public struct Respelling: Sendable, CustomStringConvertible {
    /// What the pair is, as the test report names it.
    public let name: String
    /// The value written first.
    public let first: PropertyListValue
    /// The value written second: the same under Swift's `==`, not in its bytes.
    public let second: PropertyListValue
    /// The pair's name, as a test report shows the argument.
    public var description: String { name }

    /// A named pair.
    public init(name: String, first: PropertyListValue, second: PropertyListValue) {
        self.name = name
        self.first = first
        self.second = second
    }

    /// `café` with its `é` precomposed (NFC, U+00E9).
    public static let nfc = "caf\u{E9}"
    /// `café` with its `é` decomposed (NFD, U+0065 U+0301).
    public static let nfd = "cafe\u{301}"
}
