/// Why a GVariant text could not be used.
public enum GVariantCodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// A value's text is not GVariant text.
    case unparsable(key: String, detail: String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .unparsable(let key, let detail): "\(key): the value is not GVariant text: \(detail)"
        }
    }
}
