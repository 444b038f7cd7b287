/// Why a dconf keyfile or a dconf path could not be used: the one error of this module
/// for what a person wrote (a dconf database that cannot be written or read is a
/// `GVDBError`, naming the key and the rule it breaks).
public enum DconfFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The keyfile does not parse (the detail names the first line that does not).
    case keyfile(detail: String)
    /// A dconf path that is not a directory (`/`, `/org/gnome/`: starts and ends with `/`).
    case notADirectory(String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .keyfile(let detail): "the dconf keyfile does not parse: \(detail)"
        case .notADirectory(let path): "\(path) is not a dconf directory: it must start and end with / (as /org/gnome/)"
        }
    }
}
