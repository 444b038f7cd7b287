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

    /// Starts hearing of senders that leave the bus, so that what is known of them (who
    /// they are, their subscriptions) is dropped. Without a door, nothing is dropped.
    public func followDepartures() async throws(DBusError) {
        guard let door else { return }
        let gate = gate
        try await door.followDepartures { name in gate.forget(name) }
    }

    /// The connection that received `call`, which must send its answer.
    func connection(answering call: DBusMessage) -> any ServiceConnection {
        if let door, door.serves(call) { return door.connection }
        return connection
    }
}
