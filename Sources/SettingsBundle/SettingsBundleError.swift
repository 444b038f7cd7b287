/// A problem in a settings bundle, with the file and the place in it.
///
/// Problems never stop a bundle from loading: the entry (or file) at fault is left out
/// and the rest of the bundle is used. `SettingsBundle.problems` lists them.
public enum SettingsBundleError: Error, Sendable, Hashable, CustomStringConvertible {
    /// A file could not be read (`reason` is the system's).
    case unreadable(path: String, reason: String)
    /// A file is not a property list or strings file; `reason` says where it went wrong
    /// (with the line, when the parser gives one).
    case malformed(path: String, reason: String)
    /// An entry of the file is wrong: `location` names it (`PreferenceSpecifiers[3]`,
    /// with its `Key` when it has one), `reason` says what to change.
    case invalidEntry(path: String, location: String, reason: String)

    /// The file the problem is in.
    public var path: String {
        switch self {
        case .unreadable(let path, _), .malformed(let path, _), .invalidEntry(let path, _, _): path
        }
    }

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "\(path): cannot be read: \(reason)"
        case .malformed(let path, let reason): "\(path): \(reason)"
        case .invalidEntry(let path, let location, let reason): "\(path): \(location): \(reason)"
        }
    }
}
