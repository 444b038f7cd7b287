import DBus

/// Where a client finds prefsd, and how it asks for signals: on the host the main name
/// and `AddMatch` rules; inside a Flatpak sandbox (the process's root holds
/// `/.flatpak-info`) the door `io.github.prefsd.Sandboxed1`, whose signals come to each
/// subscriber alone after its `Subscribe`.
///
/// Clients choose by themselves, once per process (``current``): `PreferencesProxy` and the
/// `Preferences` library run unchanged inside a sandbox.
public struct PreferencesEndpoint: Sendable, Hashable {
    /// The bus name calls go to and signals are accepted from (its owner's).
    public var busName: String
    /// Whether signals are asked for with the door's `Subscribe` (else with match rules).
    public var subscribesAtDoor: Bool

    /// The main name, for host processes.
    public static let host = PreferencesEndpoint(busName: PreferencesBus.busName, subscribesAtDoor: false)
    /// The door, for sandboxed applications.
    public static let sandbox = PreferencesEndpoint(busName: SandboxBus.busName, subscribesAtDoor: true)

    /// This process's endpoint: ``sandbox`` when `/.flatpak-info` exists (even unreadable),
    /// else ``host``.
    public static let current: PreferencesEndpoint = FlatpakInfo.read(atPath: FlatpakInfo.path) == .absent ? .host : .sandbox

    /// The match rule for prefsd's signals about `domain` (every domain when `nil`).
    public func rule(domain: String?) -> String {
        let base = "type='signal',sender='\(busName)',path='\(PreferencesBus.objectPath)',interface='\(PreferencesBus.interface)'"
        guard let domain else { return base }
        return base + ",arg0='\(domain)'"
    }

    /// The match rule for the changes of owner of ``busName``.
    public var ownerRule: String { BusDriver.ownerChangedRule(busName) }

    /// The call that starts the signals about `domain` (every domain when `nil`): `AddMatch`
    /// of its rule, or `Subscribe` at the door.
    public func followCall(domain: String?) -> DBusMessage {
        subscribesAtDoor ? subscription(SandboxBus.subscribeMethod, domain) : BusDriver.addMatch(rule(domain: domain))
    }

    /// The call that stops them: `RemoveMatch`, or `Unsubscribe` at the door.
    public func unfollowCall(domain: String?) -> DBusMessage {
        subscribesAtDoor ? subscription(SandboxBus.unsubscribeMethod, domain) : BusDriver.removeMatch(rule(domain: domain))
    }

    /// A call of prefsd's object at this endpoint.
    public func call(_ method: PreferencesMethod, _ body: [DBusValue]) -> DBusMessage {
        .methodCall(
            destination: busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
            member: method.rawValue, body: body)
    }

    private func subscription(_ member: String, _ domain: String?) -> DBusMessage {
        .methodCall(
            destination: busName, path: PreferencesBus.objectPath, interface: SandboxBus.interface,
            member: member, body: [.stringArray(domain.map { [$0] } ?? [])])
    }
}
