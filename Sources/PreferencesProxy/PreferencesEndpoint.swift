import DBus
import PreferencesProtocol

/// Where a client finds prefsd, and how it asks for signals: on the host the main name
/// and `AddMatch` rules; inside a Flatpak sandbox (the process's root holds
/// `/.flatpak-info`) the door `io.github.prefsd.Sandboxed1`, whose signals come to each
/// subscriber alone after `Subscribe`.
///
/// The proxy chooses by itself, once per process (``current``), so a program and the
/// `Preferences`-style layers above the proxy run unchanged inside a sandbox.
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
    func rule(domain: String?) -> String {
        let base = "type='signal',sender='\(busName)',path='\(PreferencesBus.objectPath)',interface='\(PreferencesBus.interface)'"
        guard let domain else { return base }
        return base + ",arg0='\(domain)'"
    }

    /// Starts the signals about `domain` (every domain when `nil`): adds its match rule,
    /// or subscribes at the door.
    func follow(_ domain: String?, on connection: DBusConnection) async throws(DBusError) {
        guard subscribesAtDoor else { return try await connection.addMatch(rule(domain: domain)) }
        _ = try await connection.call(subscription(SandboxBus.subscribeMethod, domain))
    }

    /// Stops the signals about `domain`, without waiting for the answer.
    func unfollow(_ domain: String?, on connection: DBusConnection) {
        let message = subscribesAtDoor
            ? subscription(SandboxBus.unsubscribeMethod, domain)
            : .methodCall(destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                          member: "RemoveMatch", body: [.string(rule(domain: domain))])
        connection.call(message) { _ in }
    }

    private func subscription(_ member: String, _ domain: String?) -> DBusMessage {
        .methodCall(destination: busName, path: PreferencesBus.objectPath, interface: SandboxBus.interface,
                    member: member, body: [.stringArray(domain.map { [$0] } ?? [])])
    }
}
