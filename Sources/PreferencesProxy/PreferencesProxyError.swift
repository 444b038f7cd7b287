import DBus
import PreferencesProtocol

/// Why a call to prefsd failed, the same for every client of the proxy.
///
/// Every D-Bus error name the service or the bus can answer maps to one case, by one
/// rule: no bus, a lost connection, `NameHasNoOwner`, `ServiceUnknown`, a failed
/// activation (`Spawn.*`), `NoReply` and `Timeout` all mean ``serviceUnavailable(_:)``.
/// Each case carries the service's own message, and ``description`` is a sentence a
/// person can act on.
public enum PreferencesProxyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No bus, a lost connection, or prefsd is not running and cannot be started or did
    /// not answer in time.
    case serviceUnavailable(String)
    /// prefsd refused the call, for one of its reasons (`PreferencesRefusal`: no such
    /// key or domain, an invalid name or value, a forced key, an existing domain, a quota,
    /// a failed store, a domain a sandboxed caller may not touch, contradicting
    /// arguments); the bus's own `AccessDenied` and `InvalidArgs` read as the same refusals.
    case refused(PreferencesRefusal)
    /// `org.freedesktop.DBus.Error.LimitsExceeded`: a call or reply larger than the bus or
    /// the service carries.
    case limitsExceeded(String)
    /// The request could not be sent as it is (a NUL in a string, an invalid UTF-8 name).
    case invalidRequest(String)
    /// A read-modify-write (``PreferencesProxy/update(_:keys:attempts:_:)``) kept finding
    /// the keys changed by another writer and gave up.
    case contended(String)
    /// prefsd answered something the interface does not allow.
    case unexpectedReply(String)
    /// Another D-Bus error, with its name.
    case busError(name: String, message: String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .serviceUnavailable(let text): "prefsd is unavailable: \(text)"
        case .refused(let refusal): refusal.description
        case .limitsExceeded(let text), .contended(let text): text
        case .invalidRequest(let text): "the request cannot be sent: \(text)"
        case .unexpectedReply(let text): "prefsd answered something unexpected: \(text); check that prefsd and this program are the same version"
        case .busError(let name, let message): message.isEmpty ? name : "\(name): \(message)"
        }
    }

    /// The refusal, when prefsd refused the call.
    public var refusal: PreferencesRefusal? {
        if case .refused(let refusal) = self { return refusal }
        return nil
    }

    /// Whether the error means prefsd could not be reached (as opposed to a refusal).
    public var isServiceUnavailable: Bool {
        if case .serviceUnavailable = self { return true }
        return false
    }

    /// The error for a failed bus call or connection.
    public init(_ error: DBusError) {
        switch error {
        case .remote(let name, let message):
            self.init(errorName: name, message: message)
        case .noSessionBus:
            self = .serviceUnavailable(
                "there is no session bus (DBUS_SESSION_BUS_ADDRESS is not set); run inside a desktop session, or under `dbus-run-session -- …` with prefsd installed"
            )
        case .connectionFailed, .disconnected:
            self = .serviceUnavailable("\(error.description)")
        case .invalidMessage(let reason):
            self = .invalidRequest(reason)
        case .invalidArguments(let reason):
            self = .unexpectedReply(reason)
        case .limitsExceeded(let reason):
            self = .limitsExceeded("the answer is larger than this client decodes: \(reason)")
        case .outOfMemory:
            self = .busError(name: "org.freedesktop.DBus.Error.NoMemory", message: error.description)
        }
    }

    /// The error for a refusal of the service.
    public init(_ refusal: PreferencesRefusal) {
        self = .refused(refusal)
    }

    /// The error for a D-Bus error reply named `name`, read through the one table of
    /// error names (``PreferencesFailure``).
    public init(errorName name: String, message: String) {
        let text = message.isEmpty ? name : message
        // Unavailability names the bus's error too: it tells an administrator where to look.
        let named = message.isEmpty ? name : "\(name): \(message)"
        switch PreferencesFailure(errorName: name) {
        case .refused:
            self = PreferencesRefusal(busErrorName: name, message: text).map { .refused($0) } ?? .busError(name: name, message: message)
        case .limitsExceeded:
            self = .limitsExceeded(text)
        case .unavailable(.notRunning):
            self = .serviceUnavailable(
                "prefsd is not running and the bus cannot start it (\(named)); install it with `make install PREFIX=~/.local` or start `prefsd` yourself")
        case .unavailable(.noAnswer):
            self = .serviceUnavailable("prefsd did not answer in time (\(named)); check that it is running (`journalctl --user -u prefsd`) and retry")
        case .unavailable(.disconnected):
            self = .serviceUnavailable("the connection to the bus went away (\(named)); retry")
        case .unavailable(.couldNotStart):
            self = .serviceUnavailable("the bus could not start prefsd (\(named)); check the D-Bus service file and prefsd's log")
        case .other:
            self = .busError(name: name, message: message)
        }
    }

    /// What the error answer meant, as ``PreferencesFailure`` reads its name (what the
    /// client engine's policy goes by); `nil` when the error keeps no error name: prefsd
    /// could not be reached, or the call failed on this side of the bus.
    public var failure: PreferencesFailure? {
        switch self {
        case .refused(let refusal): refusal.failure
        case .limitsExceeded: .limitsExceeded
        case .busError(let name, _): PreferencesFailure(errorName: name)
        case .serviceUnavailable, .invalidRequest, .contended, .unexpectedReply: nil
        }
    }
}
