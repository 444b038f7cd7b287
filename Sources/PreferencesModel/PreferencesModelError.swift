/// Why a name or value was refused by the preferences model.
public enum PreferencesModelError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A domain name that breaks the naming rules; `reason` says which.
    case invalidDomainName(String, reason: String)
    /// A key that breaks the naming rules; `reason` says which.
    case invalidKey(String, reason: String)
    /// A value that cannot be stored; `reason` says what is wrong with it.
    case invalidValue(reason: String)
    /// Stored bytes that do not decode to a value (a damaged or foreign store).
    case undecodableValue(reason: String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .invalidDomainName(let name, let reason):
            "invalid domain name \(Self.quote(name)): \(reason); use 1–255 characters of A-Z a-z 0-9 . _ - in reverse-DNS style, like com.example.Editor"
        case .invalidKey(let key, let reason):
            "invalid key \(Self.quote(key)): \(reason); a key is 1–1024 bytes of UTF-8 without NUL"
        case .invalidValue(let reason):
            "invalid value: \(reason)"
        case .undecodableValue(let reason):
            "stored value cannot be decoded: \(reason)"
        }
    }

    /// Quotes a name for a message, shortened and with control characters escaped so that
    /// hostile input cannot garble a log line.
    static func quote(_ text: String) -> String {
        let shown = text.count > 80 ? String(text.prefix(80)) + "…" : text
        return "\""
            + shown.unicodeScalars.map { scalar in
                scalar.value < 0x20 || scalar.value == 0x7f
                    ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
            }.joined() + "\""
    }
}
