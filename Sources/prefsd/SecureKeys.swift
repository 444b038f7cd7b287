import Foundation
import Logging
import PreferencesModel
import SettingsBundle

/// The keys installed settings bundles mark `IsSecure`: the journal records their changes
/// without values (contract 0.3, History).
enum SecureKeys {
    /// Reads the settings bundles found where ``SettingsBundleLocator`` looks (the XDG data
    /// directories' `prefsd/settings/<domain>/`), once, when prefsd starts: a bundle
    /// installed later counts from the next start.
    static func installed(locator: SettingsBundleLocator = SettingsBundleLocator(), logger: Logger) -> [DomainName: Set<String>] {
        var keys: [DomainName: Set<String>] = [:]
        for domain in locator.scan().domains {
            guard let name = try? DomainName(domain), let bundle = locator.bundle(for: domain, languages: []) else { continue }
            let secure = Set(bundle.panes.flatMap(\.specifiers).filter(\.isSecure).compactMap(\.key))
            if !secure.isEmpty { keys[name] = secure }
        }
        if !keys.isEmpty {
            logger.info(
                "changes of IsSecure keys are recorded without values",
                metadata: ["domains": "\(keys.keys.map(\.rawValue).sorted())"])
        }
        return keys
    }
}
