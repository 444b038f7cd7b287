/// Why a dconf keyfile or a dconf path could not be used: the one error of this module
/// for what a person wrote (a dconf database that cannot be written or read is a
/// `GVDBError`, naming the key and the rule it breaks).
public enum DconfFormatError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The keyfile does not parse (the detail names the first line that does not).
    case keyfile(detail: String)
    /// A path that is not a dconf key, and the rule it breaks (``DconfPath/whyNotKey(_:)``).
    case notAKey(String, reason: String)
    /// A path that is not a dconf directory, and the rule it breaks
    /// (``DconfPath/whyNotDirectory(_:)``).
    case notADirectory(String, reason: String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .keyfile(let detail): "the dconf keyfile does not parse: \(detail)"
        case .notAKey(let path, let reason): "\(path.debugDescription) is not a dconf key: a dconf key \(reason) (as /org/gnome/desktop/interface/gtk-theme)"
        case .notADirectory(let path, let reason): "\(path.debugDescription) is not a dconf directory: a dconf directory \(reason) (as /org/gnome/)"
        }
    }
}
