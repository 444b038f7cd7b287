/// Everything that can go wrong in the D-Bus layer.
///
/// Each case carries enough context for ``description`` to be a sentence a person can act on.
public enum DBusError: Error, Sendable, CustomStringConvertible {
    /// `DBUS_SESSION_BUS_ADDRESS` is unset or empty, so there is no session bus to connect to.
    case noSessionBus
    /// Connecting to (or registering on) the bus at `address` failed.
    case connectionFailed(address: String, reason: String)
    /// The peer answered with an error reply. Time-outs arrive as
    /// `org.freedesktop.DBus.Error.NoReply`.
    case remote(name: String, message: String)
    /// The message was refused before sending (invalid UTF-8, NUL in a string, invalid object
    /// path, name or signature, nesting too deep, dictionary entry outside an array, ...).
    case invalidMessage(String)
    /// A received body that cannot be decoded (nesting too deep, unsupported content, ...).
    case invalidArguments(String)
    /// A received message is beyond what the decoder builds (more values than its budget).
    case limitsExceeded(String)
    /// The connection is closed or was lost.
    case disconnected
    /// libdbus could not allocate memory.
    case outOfMemory

    /// A sentence describing the problem and, where possible, what to do about it.
    public var description: String {
        switch self {
        case .noSessionBus:
            return "No session bus: DBUS_SESSION_BUS_ADDRESS is not set. Run inside a desktop session, or start one with `dbus-run-session -- <command>`."
        case .connectionFailed(let address, let reason):
            return "Could not connect to the D-Bus bus at \(address): \(reason). Check that the bus is running and the address is right."
        case .remote(let name, let message):
            return message.isEmpty ? "The peer answered with the error \(name)." : "\(name): \(message)"
        case .invalidMessage(let reason):
            return "The message was not sent because it is invalid: \(reason)."
        case .invalidArguments(let reason):
            return "The received message could not be decoded: \(reason)."
        case .limitsExceeded(let reason):
            return "The received message was not decoded because it is too large: \(reason)."
        case .disconnected:
            return "The D-Bus connection is closed or was lost; open a new connection."
        case .outOfMemory:
            return "libdbus ran out of memory."
        }
    }
}
