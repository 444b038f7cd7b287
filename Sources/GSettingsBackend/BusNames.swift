import CGSettingsBackend

/// Where this process finds prefsd: the main name, or inside a Flatpak sandbox
/// (`/.flatpak-info` exists) the door `io.github.prefsd.Sandboxed1`, whose signals come to
/// each subscriber alone. The names themselves are ``PreferencesBus``'s and ``SandboxBus``'s
/// (Sources/PreferencesInterface, built into the module).
struct BusNames {
    /// The name calls go to and signals are accepted from (its owner's).
    let busName: String
    /// Whether signals are asked for with the door's `Subscribe` (else with match rules).
    let subscribesAtDoor: Bool

    /// This process's endpoint.
    static func current() -> BusNames {
        if g_file_test("/.flatpak-info", G_FILE_TEST_EXISTS) != 0 {
            return BusNames(busName: SandboxBus.busName, subscribesAtDoor: true)
        }
        return BusNames(busName: PreferencesBus.busName, subscribesAtDoor: false)
    }

    /// The match rule for prefsd's signals about `domain`.
    func rule(domain: String) -> String {
        PreferencesBus.domainMatchRule(domain: domain, sender: busName)
    }

    /// The match rule for the changes of owner of ``busName``.
    var ownerRule: String {
        PreferencesBus.ownerMatchRule(name: busName)
    }
}
