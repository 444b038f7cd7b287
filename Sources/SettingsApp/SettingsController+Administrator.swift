import PreferencesModel
import PreferencesProxy

/// The administrator's defaults (a defaults plist, unlocked keys of dconf system
/// databases), told apart from the user's own values: prefsd's reads answer the user's
/// value else the default, so the window asks `AdministratorDefaults` for the defaults.
extension SettingsController {
    /// Reads `domain`'s administrator defaults and tells the window when they changed. While
    /// a read is on its way, further asks are folded into one more read after it.
    func loadAdministratorDefaults(_ domain: String) {
        if administratorLoads[domain] != nil {
            administratorLoads[domain] = true
            return
        }
        administratorLoads[domain] = false
        let proxy = proxy, handle = handle
        Task {
            var defaults: [String: PropertyListValue] = [:]
            var failure: PreferencesProxyError?
            do throws(PreferencesProxyError) {
                defaults = try await proxy.administratorDefaults(domain)
            } catch {
                failure = error
            }
            let loaded = defaults, outcome = failure
            handle.post { controller in
                let again = controller.administratorLoads.removeValue(forKey: domain) ?? false
                if let outcome {
                    // An older prefsd without the method: there is nothing to tell apart.
                    FileHandleOutput.warn("the administrator's defaults of \(domain) could not be read: \(outcome.description)")
                } else if (controller.administratorDefaults[domain] ?? [:]) != loaded {
                    controller.administratorDefaults[domain] = loaded.isEmpty ? nil : loaded
                    controller.window?.valuesChanged(in: domain)
                }
                if again { controller.loadAdministratorDefaults(domain) }
            }
        }
    }

    /// The administrator's default of a key (not a forced value), if there is one.
    func administratorDefault(_ domain: String, _ key: String) -> PropertyListValue? {
        administratorDefaults[domain]?[key]
    }

    /// The user's own value of a key: the value prefsd reads unless it is only the
    /// administrator's default (a value equal to the default cannot be told from it, and
    /// makes no difference to what is read), or the key is forced.
    func ownValue(_ domain: String, _ key: String) -> PropertyListValue? {
        guard !isForced(domain, key), let value = values(in: domain)[key] else { return nil }
        return value == administratorDefault(domain, key) ? nil : value
    }

    /// Whether the key reads the administrator's default: it has one, and the user has no
    /// value of their own and it is not forced.
    func readsAdministratorDefault(_ domain: String, _ key: String) -> Bool {
        administratorDefault(domain, key) != nil && !isForced(domain, key) && ownValue(domain, key) == nil
    }
}
