/// Why a GVariant text, a `dconf dump` keyfile or a dconf path could not be used.
public enum GVariantCodingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The keyfile does not parse (the detail names the first line that does not).
    case keyfile(detail: String)
    /// A dconf path that is not a directory (`/`, `/org/gnome/`: starts and ends with `/`).
    case notADirectory(String)
    /// A value's text is not GVariant text.
    case unparsable(key: String, detail: String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .keyfile(let detail): "the dconf keyfile does not parse: \(detail)"
        case .notADirectory(let path): "\(path) is not a dconf directory: it must start and end with / (as /org/gnome/)"
        case .unparsable(let key, let detail): "\(key): the value is not GVariant text: \(detail)"
        }
    }
}
