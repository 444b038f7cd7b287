/// Why a channel name, a property name, a value or a channel file was refused.
public enum XfconfError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A channel name xfconfd refuses, or one prefsd's domain names cannot carry; `reason`
    /// says which rule it breaks. xfconfd answers both with `InvalidChannel`.
    case invalidChannel(String, reason: String)
    /// A property name xfconfd refuses, or one longer than prefsd's keys; `reason` says which
    /// rule it breaks. xfconfd answers both with `InvalidProperty`.
    case invalidProperty(String, reason: String)
    /// A channel file that does not parse as xfconfd's format, or nests too deeply;
    /// `detail` says where and why.
    case unparsableFile(detail: String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .invalidChannel(let name, let reason):
            "invalid xfconf channel name \(Self.quote(name)): \(reason); a channel name is 1–\(XfconfChannel.maximumLength) characters of A-Z a-z 0-9 . _ -"
        case .invalidProperty(let name, let reason):
            "invalid xfconf property name \(Self.quote(name)): \(reason); a property name is /, then names of A-Z a-z 0-9 _ - . , : | [ ] { } < > separated by /"
        case .unparsableFile(let detail):
            "not an xfconf channel file as xfconfd reads them: \(detail)"
        }
    }

    /// Quotes a name for a message, shortened and with control characters escaped so that
    /// hostile input cannot garble a log line.
    static func quote(_ text: String) -> String {
        let shown = text.count > 80 ? String(text.prefix(80)) + "…" : text
        return "\""
            + shown.unicodeScalars.map { scalar in
                scalar.value < 0x20 || scalar.value == 0x7f ? "\\u{\(String(scalar.value, radix: 16))}" : String(scalar)
            }.joined() + "\""
    }
}
