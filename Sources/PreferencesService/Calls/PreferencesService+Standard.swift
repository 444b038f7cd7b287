import DBus
import PreferencesProtocol

extension StandardInterfaces {
    /// What the preferences object answers besides its own interface (Peer is libdbus's):
    /// `Introspect` with the XML of `Introspection/` verbatim, and `Version`, read-only.
    static func preferences(version: String) -> StandardInterfaces {
        StandardInterfaces(
            path: PreferencesBus.objectPath, introspectionXML: preferencesIntrospectionXML,
            interfaceProperties: [PreferencesBus.interface: [PreferencesBus.versionProperty: .string(version)]]
        )
    }
}

/// The embedded XML, under a name that member lookups inside `StandardInterfaces` do not shadow.
private let preferencesIntrospectionXML = introspectionXML
