/// The bus interface's methods, by their member names.
public enum PreferencesMethod: String, Sendable, CaseIterable {
    case read = "Read"
    case write = "Write"
    case remove = "Remove"
    case domains = "Domains"
    case readDomain = "ReadDomain"
    case apply = "Apply"
    case applyIf = "ApplyIf"
    case replaceDomain = "ReplaceDomain"
    case removeDomain = "RemoveDomain"
    case volatileDomains = "VolatileDomains"
    case readVolatileDomain = "ReadVolatileDomain"
    case setVolatileDomain = "SetVolatileDomain"
    case removeVolatileDomain = "RemoveVolatileDomain"
    case isForced = "IsForced"
    case lookup = "Lookup"
    case forcedKeys = "ForcedKeys"
    case history = "History"
    case revertTo = "RevertTo"
    case revertKeyTo = "RevertKeyTo"
    /// Beyond the contract: the newest entries of the change journal.
    case recentHistory = "RecentHistory"
    /// Contract 0.4: the administrator's defaults of a domain (not its locks).
    case administratorDefaults = "AdministratorDefaults"
    /// Beyond the contract: the domains an administrator sets values in.
    case administeredDomains = "AdministeredDomains"

    /// The D-Bus signature of the method's input arguments.
    public var inputSignature: String {
        switch self {
        case .read, .remove, .isForced: "ss"
        case .write: "ssv"
        case .domains, .volatileDomains, .administeredDomains: ""
        case .readDomain, .removeDomain, .readVolatileDomain, .removeVolatileDomain, .forcedKeys, .administratorDefaults: "s"
        case .apply: "sa{sv}as"
        case .applyIf: "sa{sv}asa{sv}as"
        case .replaceDomain, .setVolatileDomain: "sa{sv}"
        case .lookup: "ass"
        case .history: "sstu"
        case .recentHistory: "ssu"
        case .revertTo: "st"
        case .revertKeyTo: "sst"
        }
    }
}
