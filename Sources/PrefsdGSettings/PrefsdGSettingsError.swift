import PreferencesProxy

/// Why the GSettings backend could not do what GSettings asked.
enum PrefsdGSettingsError: Error, Sendable, CustomStringConvertible {
    /// prefsd could not be reached or refused the call.
    case prefsd(PreferencesProxyError)
    /// The GSettings key has no place in prefsd (see `SettingsLocation`).
    case unmappable(String)
    /// An administrator forces the key.
    case forced(String)

    /// A sentence a person can act on.
    var description: String {
        switch self {
        case .prefsd(let error): error.description
        case .unmappable(let key): "the GSettings key \(key) cannot be stored in prefsd: its path breaks prefsd's limits on domain names and keys (1–1024 bytes of UTF-8 in normal form C)"
        case .forced(let key): "the GSettings key \(key) is set by an administrator (prefsd managed preferences) and cannot be changed"
        }
    }
}
