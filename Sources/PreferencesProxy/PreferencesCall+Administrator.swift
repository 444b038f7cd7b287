import DBus
import PreferencesModel
import PreferencesProtocol

extension PreferencesCall {
    /// `AdministratorDefaults(s domain) -> a{sv}` (contract 0.4): the defaults an
    /// administrator sets in `domain` (a defaults plist, unlocked keys of dconf system
    /// databases), forced keys left out; empty when there are none.
    public static func administratorDefaults(_ domain: String) -> PreferencesRequest<[String: PropertyListValue]> {
        dictionary(.administratorDefaults, [.string(domain)])
    }

    /// `AdministeredDomains() -> as` (beyond the contract): the domains an administrator
    /// sets values in (a managed file, a defaults plist, a dconf system database), whether
    /// or not the user stored anything there; sorted.
    public static func administeredDomains() -> PreferencesRequest<[String]> {
        strings(.administeredDomains, [])
    }
}

extension PreferencesProxy {
    /// `AdministratorDefaults`: the defaults an administrator sets in `domain`, which the
    /// user's own values override (`readDomain` answers them merged); forced keys are not
    /// among them (see ``forcedKeys(_:)``).
    public func administratorDefaults(_ domain: String) async throws(PreferencesProxyError) -> [String: PropertyListValue] {
        try await perform(PreferencesCall.administratorDefaults(domain))
    }
}
