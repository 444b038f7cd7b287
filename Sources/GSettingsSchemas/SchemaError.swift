/// Why text typed for a GSettings key cannot be written, or schemas cannot be read.
public enum SchemaError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The text is not GVariant text of the key's type (GLib's reason).
    case unparsable(key: String, type: String, detail: String)
    /// The text is not GVariant text of the key's type: GLib's message with the text and
    /// the offending part marked, as `gsettings set` prints it (lines ending in `\n`).
    case unparsableText(key: String, context: String)
    /// The value parses but the schema's choices or range refuse it.
    case outOfRange(key: String, allowed: String)
    /// A directory of compiled schemas GLib cannot read (GLib's reason).
    case unreadableDirectory(String, detail: String)
    /// A value a schema key cannot hold: the key as the writer named it, the schema, the
    /// key's GVariant type, what the key takes besides its type (`""`: any value of it), the
    /// value given, and a value of the key's type that would do (`""`: none to suggest).
    case notHeld(key: String, schema: String, type: String, allowed: String, given: String, suggestion: String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .unparsable(let key, let type, let detail):
            "the text for \(key) is not a GVariant of type \(type) (\(detail)); write it as `gsettings set` takes it"
        case .unparsableText(let key, let context):
            "the text for \(key) is not GVariant text of its type: \(context.split(separator: "\n").joined(separator: " "))"
        case .outOfRange(let key, let allowed):
            "\(key) takes only \(allowed)"
        case .unreadableDirectory(let directory, let detail):
            "no compiled schemas can be read from \(directory): \(detail)"
        case .notHeld(let key, let schema, let type, let allowed, let given, let suggestion):
            "\(key) cannot hold \(given): the GSettings schema \(schema) gives it the type \(type) (\(KeyfileCheck.typeName(type)))"
                + (allowed.isEmpty ? "" : " and it takes only \(allowed)") + (suggestion.isEmpty ? "" : "; \(suggestion) would do")
        }
    }
}
