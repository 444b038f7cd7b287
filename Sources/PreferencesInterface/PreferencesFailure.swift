/// What an error answer to a call to prefsd means, read from its D-Bus error name: the one
/// table from error name to meaning. The proxy's errors, the service's refusals read back,
/// the client engine's retry policy and the GSettings module all read error names through
/// it, so no two clients can take the same answer differently.
public enum PreferencesFailure: Equatable, Sendable {
    /// prefsd refused the call for one of its reasons (a name in its namespace, those a
    /// newer prefsd adds included, or ``PreferencesErrorName/invalidArguments``); the bus's
    /// own `AccessDenied` (a policy or a sandbox's proxy said no) reads as prefsd's
    /// ``PreferencesErrorName/accessDenied``.
    case refused(PreferencesErrorName)
    /// `org.freedesktop.DBus.Error.LimitsExceeded`: a call larger than the bus or the
    /// service carries.
    case limitsExceeded
    /// prefsd could not be reached, for this reason.
    case unavailable(Unavailability)
    /// Any other error: nothing a client of prefsd acts on by its name.
    case other

    /// Why prefsd could not be reached.
    public enum Unavailability: Equatable, Sendable {
        /// Nobody owns prefsd's name and the bus cannot start it (`ServiceUnknown`, `NameHasNoOwner`).
        case notRunning
        /// The bus tried to start prefsd and failed (`Spawn.*`).
        case couldNotStart
        /// prefsd did not answer in time (`NoReply`, `Timeout`, `TimedOut`).
        case noAnswer
        /// The connection to the bus went away (`Disconnected`, `NoServer`).
        case disconnected
    }

    /// The meaning of an error answer named `errorName`.
    public init(errorName: String) {
        if let name = PreferencesErrorName(busName: errorName) {
            self = .refused(name)
            return
        }
        let bus = "org.freedesktop.DBus.Error."
        guard errorName.hasPrefix(bus) else {
            self = .other
            return
        }
        switch errorName.dropFirst(bus.count) {
        case "InvalidArgs": self = .refused(.invalidArguments)
        case "LimitsExceeded": self = .limitsExceeded
        case "AccessDenied": self = .refused(.accessDenied)
        case "ServiceUnknown", "NameHasNoOwner": self = .unavailable(.notRunning)
        case "NoReply", "Timeout", "TimedOut": self = .unavailable(.noAnswer)
        case "Disconnected", "NoServer": self = .unavailable(.disconnected)
        case let rest where rest.hasPrefix("Spawn."): self = .unavailable(.couldNotStart)
        default: self = .other
        }
    }

    /// Whether a read refused this way found no such domain or key: for a load of a whole
    /// domain, a domain with no keys.
    public var isNotFound: Bool { self == .refused(.notFound) }

    /// Whether a batch of several keys refused this way may be stored a key at a time: the
    /// refusal was about one key (its name, its value, a forced key, a size limit), so the
    /// batch's other keys may well be taken alone. A failed store, a domain the caller may
    /// not touch, an unreachable prefsd refuse every key alike, and are not sent again.
    public var concernsOneKey: Bool {
        switch self {
        case .refused(.invalidName), .refused(.invalidValue), .refused(.forced), .refused(.quotaExceeded),
            .refused(.invalidArguments), .limitsExceeded:
            true
        case .refused, .unavailable, .other:
            false
        }
    }
}
