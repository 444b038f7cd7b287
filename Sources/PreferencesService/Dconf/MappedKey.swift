import DconfFormats
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

    /// Where the dconf key `path` lives in prefsd: the one place a dconf key is mapped.
    /// - Throws: ``PreferencesServiceError/invalidName(_:)`` saying why it cannot be there.
    static func mapping(_ path: String) throws(PreferencesServiceError) -> MappedKey {
        do { try DconfPath.checkKey(path) } catch { throw .invalidName(error.description) }
        guard let location = GSettingsPath(settingsKey: path), let domain = try? DomainName(location.domain) else {
            throw .invalidName(
                "prefsd cannot store the dconf key \(path): its key would be empty, longer than \(PreferenceKey.maximumLength) bytes or not in Unicode normal form C"
            )
        }
        return MappedKey(domain: domain, key: location.key)
    }
}
