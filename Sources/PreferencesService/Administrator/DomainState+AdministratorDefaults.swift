import PreferencesModel

extension DomainState {
    /// `AdministratorDefaults` (contract 0.4): the defaults an administrator sets in
    /// `domain` (a defaults plist, or an unlocked key of a dconf system database), which a
    /// user's own value overrides. Keys an administrator forces are left out: their value
    /// is no default. Empty when the administrator sets no default there.
    func administratorDefaults(domain: DomainName) -> [String: PropertyListValue] {
        guard var defaults = administrator.defaults[domain] else { return [:] }
        for key in defaults.keys where isForced(domain: domain, key: key) { defaults[key] = nil }
        return defaults
    }

    /// `AdministeredDomains` (beyond the contract): the domains an administrator sets
    /// values in (forces, locks or gives defaults to), whether or not the user stored
    /// anything there; unsorted.
    var administeredDomainNamesUnsorted: [DomainName] {
        Array(Set(forced.keys).union(administrator.keys.keys))
    }
}
