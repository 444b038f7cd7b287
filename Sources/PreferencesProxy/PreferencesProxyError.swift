import DBus
import PreferencesProtocol

/// Why a call to prefsd failed, the same for every client of the proxy.
///
/// Every D-Bus error name the service or the bus can answer maps to one ``Code``, by one
/// rule: no bus, a lost connection, `NameHasNoOwner`, `ServiceUnknown`, a failed
/// activation (`Spawn.*`), `NoReply` and `Timeout` all mean ``Code/serviceUnavailable``.
/// Each error carries the service's own message, and ``description`` is a sentence a
/// person can act on.
///
/// A struct of static members, as swift-system's `Errno` is, not an enum: a kind of failure
/// a later version adds is one more ``Code`` and breaks no client's `switch`. Match one by
/// its code (`case .serviceUnavailable:` compares ``code``) or, for a refusal, by the
/// refusal's name (`case .refused(.notFound):`); the details are ``message``,
/// ``refusal`` and ``name``. A refusal is made with ``init(_:)-(PreferencesRefusal)``.
public struct PreferencesProxyError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure an error is.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as the static member spells it.
        public let rawValue: String

        /// The code named `rawValue`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// No bus, a lost connection, or prefsd is not running and cannot be started or
        /// did not answer in time.
        public static let serviceUnavailable = Self(rawValue: "serviceUnavailable")
        /// prefsd refused the call, for one of its reasons (`PreferencesRefusal`).
        public static let refused = Self(rawValue: "refused")
        /// A call or reply larger than the bus or the service carries.
        public static let limitsExceeded = Self(rawValue: "limitsExceeded")
        /// The request could not be sent as it is.
        public static let invalidRequest = Self(rawValue: "invalidRequest")
        /// A read-modify-write kept finding the keys changed by another writer.
        public static let contended = Self(rawValue: "contended")
        /// prefsd answered something the interface does not allow.
        public static let unexpectedReply = Self(rawValue: "unexpectedReply")
        /// Another D-Bus error, with its name.
        public static let busError = Self(rawValue: "busError")

        /// The code's name.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// The service's or the bus's own message (the refusal's, for ``Code/refused``).
    public let message: String
    /// The refusal, when prefsd refused the call (``Code/refused``), else `nil`.
    public let refusal: PreferencesRefusal?
    /// The D-Bus error name of another bus error (``Code/busError``), else `nil`.
    public let name: String?

    /// An error of `code` with its details.
    public init(code: Code, message: String, refusal: PreferencesRefusal? = nil, name: String? = nil) {
        self.code = code
        self.message = message
        self.refusal = refusal
        self.name = name
    }

    /// No bus, a lost connection, or prefsd is not running and cannot be started or did
    /// not answer in time.
    public static func serviceUnavailable(_ message: String) -> Self { Self(code: .serviceUnavailable, message: message) }
    /// `org.freedesktop.DBus.Error.LimitsExceeded`: a call or reply larger than the bus or
    /// the service carries.
    public static func limitsExceeded(_ message: String) -> Self { Self(code: .limitsExceeded, message: message) }
    /// The request could not be sent as it is (a NUL in a string, an invalid UTF-8 name).
    public static func invalidRequest(_ message: String) -> Self { Self(code: .invalidRequest, message: message) }
    /// A read-modify-write (``PreferencesProxy/update(_:keys:attempts:_:)``) kept finding
    /// the keys changed by another writer and gave up.
    public static func contended(_ message: String) -> Self { Self(code: .contended, message: message) }
    /// prefsd answered something the interface does not allow.
    public static func unexpectedReply(_ message: String) -> Self { Self(code: .unexpectedReply, message: message) }
    /// Another D-Bus error, with its name.
    public static func busError(name: String, message: String) -> Self { Self(code: .busError, message: message, name: name) }

    // The codes again, as members of the error: what `case .serviceUnavailable:` finds in a
    // pattern (beside the functions above of the same base name, which make errors).

    /// ``Code/serviceUnavailable``, for patterns.
    public static var serviceUnavailable: Code { .serviceUnavailable }
    /// ``Code/refused``, for patterns.
    public static var refused: Code { .refused }
    /// ``Code/limitsExceeded``, for patterns.
    public static var limitsExceeded: Code { .limitsExceeded }
    /// ``Code/invalidRequest``, for patterns.
    public static var invalidRequest: Code { .invalidRequest }
    /// ``Code/contended``, for patterns.
    public static var contended: Code { .contended }
    /// ``Code/unexpectedReply``, for patterns.
    public static var unexpectedReply: Code { .unexpectedReply }
    /// ``Code/busError``, for patterns.
    public static var busError: Code { .busError }

    /// A refusal named `name` with no message, the pattern of every refusal of that name:
    /// `case .refused(.notFound):` matches whatever the refusal's message. A refusal with
    /// its message is made with ``init(_:)-(PreferencesRefusal)``.
    public static func refused(_ name: PreferencesErrorName) -> Self { Self(PreferencesRefusal(name, "")) }

    /// Whether `error` is of `code`: what lets `case .serviceUnavailable:` match an error.
    public static func ~= (code: Code, error: Self) -> Bool {
        error.code == code
    }

    /// Whether `error` matches `pattern`: a refusal with no message (as `.refused(.notFound)`
    /// makes) matches every refusal of its name, what lets `case .refused(.notFound):`
    /// match; any other pattern matches an equal error.
    public static func ~= (pattern: Self, error: Self) -> Bool {
        if pattern.code == .refused, pattern.message.isEmpty, let name = pattern.refusal?.name {
            return error.refusal?.name == name
        }
        return pattern == error
    }

    /// A sentence a person can act on.
    public var description: String {
        switch code {
        case .serviceUnavailable: "prefsd is unavailable: \(message)"
        case .refused: refusal?.description ?? message
        case .invalidRequest: "the request cannot be sent: \(message)"
        case .unexpectedReply: "prefsd answered something unexpected: \(message); check that prefsd and this program are the same version"
        case .busError: message.isEmpty ? (name ?? "") : "\(name ?? ""): \(message)"
        default: message
        }
    }

    /// Where prefsd's log is, for the messages that send a person to it: the journal when
    /// systemd started prefsd (the bus hands its activation to prefsd.service where a
    /// systemd user manager runs), else the standard error of the bus daemon that started
    /// it, else the terminal prefsd runs in.
    public static let logLocation =
        "prefsd's log: `journalctl --user -u prefsd` when systemd started it, else the standard error of the bus daemon that started it (the session's log, or the terminal of `dbus-run-session`), or the terminal prefsd runs in"

    /// Whether the error means prefsd could not be reached (as opposed to a refusal).
    public var isServiceUnavailable: Bool { code == .serviceUnavailable }

    /// The error for a failed bus call or connection; a failure of the D-Bus layer this
    /// version does not know reads as a ``Code/busError`` with its description.
    public init(_ error: DBusError) {
        switch error.code {
        case .remote:
            self.init(errorName: error.name ?? "", message: error.message)
        case .noSessionBus:
            self = .serviceUnavailable(
                "there is no session bus (DBUS_SESSION_BUS_ADDRESS is not set); run inside a desktop session, or under `dbus-run-session -- …` with prefsd installed"
            )
        case .connectionFailed, .disconnected:
            self = .serviceUnavailable("\(error.description)")
        case .invalidMessage:
            self = .invalidRequest(error.message)
        case .invalidArguments:
            self = .unexpectedReply(error.message)
        case .limitsExceeded:
            self = .limitsExceeded("the answer is larger than this client decodes: \(error.message)")
        case .outOfMemory:
            self = .busError(name: "org.freedesktop.DBus.Error.NoMemory", message: error.description)
        default:
            self = .busError(name: error.name ?? "org.freedesktop.DBus.Error.Failed", message: error.description)
        }
    }

    /// prefsd refused the call, for one of its reasons (`PreferencesRefusal`: no such
    /// key or domain, an invalid name or value, a forced key, an existing domain, a quota,
    /// a failed store, a domain a sandboxed caller may not touch, contradicting
    /// arguments); the bus's own `AccessDenied` and `InvalidArgs` read as the same refusals.
    public init(_ refusal: PreferencesRefusal) {
        self.init(code: .refused, message: refusal.message, refusal: refusal)
    }

    /// The error for a D-Bus error reply named `name`, read through the one table of
    /// error names (`PreferencesFailure`).
    public init(errorName name: String, message: String) {
        let text = message.isEmpty ? name : message
        // Unavailability names the bus's error too: it tells an administrator where to look.
        let named = message.isEmpty ? name : "\(name): \(message)"
        switch PreferencesFailure(errorName: name) {
        case .refused:
            self = PreferencesRefusal(busErrorName: name, message: text).map { Self($0) } ?? .busError(name: name, message: message)
        case .limitsExceeded:
            self = .limitsExceeded(text)
        case .unavailable(.notRunning):
            self = .serviceUnavailable(
                "prefsd is not running and the bus cannot start it (\(named)); install it with `make install PREFIX=~/.local` or start `prefsd` yourself")
        case .unavailable(.noAnswer):
            self = .serviceUnavailable("prefsd did not answer in time (\(named)); check that it is running and retry (\(Self.logLocation))")
        case .unavailable(.disconnected):
            self = .serviceUnavailable("the connection to the bus went away (\(named)); retry")
        case .unavailable(.couldNotStart):
            self = .serviceUnavailable("the bus could not start prefsd (\(named)); check the D-Bus service file and \(Self.logLocation)")
        case .other:
            self = .busError(name: name, message: message)
        }
    }

    /// What the error answer meant, as `PreferencesFailure` reads its name (what the
    /// client engine's policy goes by); `nil` when the error keeps no error name: prefsd
    /// could not be reached, or the call failed on this side of the bus.
    public var failure: PreferencesFailure? {
        switch code {
        case .refused: refusal?.failure
        case .limitsExceeded: .limitsExceeded
        case .busError: name.map { PreferencesFailure(errorName: $0) }
        default: nil
        }
    }
}

/// Whether a caught `error` is a ``PreferencesProxyError`` of `code`: what lets
/// `catch PreferencesProxyError.serviceUnavailable` match.
public func ~= (code: PreferencesProxyError.Code, error: any Error) -> Bool {
    (error as? PreferencesProxyError)?.code == code
}
