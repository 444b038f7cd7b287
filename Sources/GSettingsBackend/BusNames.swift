import CGSettingsBackend

/// prefsd's names on the bus (the same as `PreferencesProtocol`'s, which the module
/// cannot import: it is built without Foundation), and where this process finds it: the
/// main name, or inside a Flatpak sandbox (`/.flatpak-info` exists) the door
/// `io.github.prefsd.Sandboxed1`, whose signals come to each subscriber alone.
struct BusNames {
    static let objectPath = "/io/github/prefsd/Preferences1"
    static let interface = "io.github.prefsd.Preferences1"
    static let errorPrefix = "io.github.prefsd.Preferences1.Error."
    static let notFound = "io.github.prefsd.Preferences1.Error.NotFound"
    static let sandboxInterface = "io.github.prefsd.Sandboxed1"

    /// The name calls go to and signals are accepted from (its owner's).
    let busName: String
    /// Whether signals are asked for with the door's `Subscribe` (else with match rules).
    let subscribesAtDoor: Bool

    /// This process's endpoint.
    static func current() -> BusNames {
        if g_file_test("/.flatpak-info", G_FILE_TEST_EXISTS) != 0 {
            return BusNames(busName: "io.github.prefsd.Sandboxed1", subscribesAtDoor: true)
        }
        return BusNames(busName: "io.github.prefsd.Preferences1", subscribesAtDoor: false)
    }

    /// The match rule for prefsd's signals about `domain`.
    func rule(domain: String) -> String {
        "type='signal',sender='" + busName + "',path='" + Self.objectPath + "',interface='" + Self.interface + "',arg0='" + domain + "'"
    }

    /// The match rule for the changes of owner of ``busName``.
    var ownerRule: String {
        "type='signal',sender='org.freedesktop.DBus',interface='org.freedesktop.DBus',member='NameOwnerChanged',arg0='" + busName + "'"
    }
}
