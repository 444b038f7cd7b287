import PreferencesModel
import SettingsBundle

extension Preferences {
    /// The `DefaultValue`s of the settings bundle for `domain`, found in the XDG data
    /// directories of `environment` (`prefsd/settings/<domain>/`): the registration
    /// domain starts with them, so the application and the Settings app agree on every
    /// default without the application copying them into `register(defaults:)`. Values
    /// the application registers itself take precedence. No bundle gives no values; a
    /// bundle's problems leave out only the entries at fault.
    static func settingsBundleDefaults(for domain: DomainName, environment: [String: String]) -> [String: PropertyListValue] {
        guard domain != .global, let directory = SettingsBundleLocator(environment: environment).directory(for: domain.rawValue) else {
            return [:]
        }
        return SettingsBundle.load(domain: domain.rawValue, directory: directory, languages: []).defaultValues
    }
}
