import DBus

/// Calls the service's methods from a test over a bus connection (see ``PreferencesCaller``).
public struct ServiceClient: PreferencesCaller {
    public let connection: DBusConnection

    /// A client calling over `connection`.
    public init(connection: DBusConnection) {
        self.connection = connection
    }

    /// The reply to `message`, over the bus.
    public func send(_ message: DBusMessage) async throws(DBusError) -> DBusMessage {
        try await connection.call(message)
    }
}
