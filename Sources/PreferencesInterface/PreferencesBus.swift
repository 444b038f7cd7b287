/// The fixed names of the prefsd bus interface, shared by the service and every client
/// (the proxy, the client engine and the GSettings module, which builds these sources in
/// Embedded Swift: so they use nothing but the standard library).
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

    /// The common prefix of the service's error names (``PreferencesErrorName``).
    public static let errorPrefix = "io.github.prefsd.Preferences1.Error."

    /// The match rule that subscribes to `Changed` for one domain, as the contract gives it.
    public static func changedMatchRule(domain: String) -> String {
        "type='signal',interface='" + interface + "',member='" + changedSignal + "',arg0='" + domain + "'"
    }

    /// The match rule that subscribes to every signal about one domain name (`Changed`,
    /// `ForcedKeysChanged` and `VolatileChanged`) sent by the owner of `sender` (the main
    /// name, or inside a sandbox ``SandboxBus/busName``), as the clients add it.
    public static func domainMatchRule(domain: String, sender: String = busName) -> String {
        "type='signal',sender='" + sender + "',path='" + objectPath + "',interface='" + interface + "',arg0='" + domain + "'"
    }

    /// The match rule for the bus's `NameOwnerChanged` about `name`: how a client learns
    /// that prefsd started, stopped or was replaced.
    public static func ownerMatchRule(name: String = busName) -> String {
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='" + name + "'"
    }
}
