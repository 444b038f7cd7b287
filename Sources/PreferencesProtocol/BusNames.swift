/// The fixed names of the prefsd bus interface, shared by the service and its clients.
public enum PreferencesBus {
    /// The well-known bus name the service owns on the session bus.
    public static let busName = "io.github.prefsd.Preferences1"
    /// The path of the one object the service exports.
    public static let objectPath = "/io/github/prefsd/Preferences1"
    /// The interface of that object.
    public static let interface = "io.github.prefsd.Preferences1"
    /// The name of the signal emitted after every committed change of a persistent domain.
    public static let changedSignal = "Changed"
    /// The name of the signal emitted after every change of a volatile domain.
    public static let volatileChangedSignal = "VolatileChanged"
    /// The name of the signal emitted when the keys an administrator forces in a domain change.
    public static let forcedKeysChangedSignal = "ForcedKeysChanged"
    /// The name of the read-only property holding the service's version.
    public static let versionProperty = "Version"

    /// The match rule that subscribes to `Changed` for one domain, as the contract gives it.
    public static func changedMatchRule(domain: String) -> String {
        "type='signal',interface='\(interface)',member='\(changedSignal)',arg0='\(domain)'"
    }

    /// The match rule that subscribes to every signal about one domain name (`Changed`,
    /// `ForcedKeysChanged` and `VolatileChanged`), as the client library adds it.
    public static func domainMatchRule(domain: String) -> String {
        "type='signal',sender='\(busName)',path='\(objectPath)',interface='\(interface)',arg0='\(domain)'"
    }
}

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
        case .revertTo: "st"
        case .revertKeyTo: "sst"
        }
    }
}
