/// Why text typed for a GSettings key cannot be written.
public enum SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not GVariant text of the key's type (GLib's reason).
    case unparsable(key: String, type: String, detail: String)
    /// The value parses but the schema's choices or range refuse it.
    case outOfRange(key: String, allowed: String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .unparsable(let key, let type, let detail):
            "the text for \(key) is not a GVariant of type \(type) (\(detail)); write it as `gsettings set` takes it"
        case .outOfRange(let key, let allowed):
            "\(key) takes only \(allowed)"
        }
    }
}
