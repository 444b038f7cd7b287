import DBus
import PreferencesProtocol

/// The service's side of the sandbox door: the same object served on the door's
/// connection, and answers sent back over the connection a call came in on. (Signals go
/// to the door's subscribers one by one from `emitSignal`.)
extension PreferencesService {
    /// Exports the preferences object on the door's connection too.
    func registerDoor() throws(DBusError) {
        guard let door else { return }
        door.connection.setMaximumMessageSize(configuration.limits.maximumMessageBytes)
        try door.connection.registerObject(path: PreferencesBus.objectPath) { [self] call in
            receive(call)
        }
    }

    /// Starts hearing of senders that come onto the bus and leave it: what is known of one
    /// that left (who it was, its subscriptions) is dropped in time. When prefsd serves
    /// dconf or xfconf, each new sender is identified as it appears, before it sends
    /// anything, so that a client that sends a change and leaves at once is still known (on
    /// dconf's and xfconf's names, a caller that left unidentified is refused). Without a
    /// door, nothing is followed.
    public func followDepartures() async throws(DBusError) {
        guard let door else { return }
        let gate = gate
        let identifyEarly = dconf != nil || xfconf != nil
        let arrived: @Sendable (String) -> Void = { name in if identifyEarly { gate.prepare(name) } }
        try await door.followConnections(arrived: arrived) { name in gate.forget(name) }
    }

    /// The connection that received `call`, which must send its answer.
    func connection(answering call: DBusMessage) -> any ServiceConnection {
        if let door, door.serves(call) { return door.connection }
        if let dconfConnection, Self.isForDconf(call, dconfConnection: dconfConnection) { return dconfConnection }
        if let xfconfConnection, Self.isForXfconf(call, xfconfConnection: xfconfConnection) { return xfconfConnection }
        return connection
    }
}
