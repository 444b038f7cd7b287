import GSettingsPaths
import PreferencesModel

/// A GSettings key as prefsd keeps it: the domain and key the path rule maps a dconf key to.
struct MappedKey: Sendable, Hashable, Comparable {
    /// The prefsd domain.
    var domain: DomainName
    /// The key inside it.
    var key: String

    static func < (lhs: MappedKey, rhs: MappedKey) -> Bool {
        (lhs.domain.rawValue, lhs.key) < (rhs.domain.rawValue, rhs.key)
    }

    /// Where the dconf key `path` lives in prefsd.
    /// - Throws: ``PreferencesServiceError/invalidName(_:)`` saying why it cannot be there.
    static func mapping(_ path: String) throws(PreferencesServiceError) -> MappedKey {
        guard path.hasPrefix("/"), !path.hasSuffix("/"), !path.contains("//") else {
            throw .invalidName("\(path) is not a dconf key (it starts with /, has no // and does not end with /)")
        }
        guard let location = GSettingsPath(settingsKey: path), let domain = try? DomainName(location.domain) else {
            throw .invalidName(
                "\(path) cannot be a GSettings key under prefsd (its prefsd key would break the limits on keys: 1–1024 bytes of UTF-8 in normal form C)")
        }
        return MappedKey(domain: domain, key: location.key)
    }
}
