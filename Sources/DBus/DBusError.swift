/// Everything that can go wrong in the D-Bus layer.
///
/// Each error carries enough context for ``description`` to be a sentence a person can act on.
///
/// A struct of static members, as swift-system's `Errno` is, not an enum: a kind of failure
/// a later version adds is one more ``Code`` and breaks no client's `switch`. Match one by
/// its code: `case .remote:`, `catch DBusError.disconnected` and
/// `catch let error as DBusError where error.code == .remote` compare ``code``. The error reply's name is ``name``, its message ``message``.
public struct DBusError: Error, Sendable, Hashable, CustomStringConvertible {
    /// What kind of failure an error is.
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The code's name, as the static member spells it.
        public let rawValue: String

        /// The code named `rawValue`.
        public init(rawValue: String) {
            self.rawValue = rawValue
        }

        /// `DBUS_SESSION_BUS_ADDRESS` is unset or empty.
        public static let noSessionBus = Self(rawValue: "noSessionBus")
        /// Connecting to (or registering on) a bus failed.
        public static let connectionFailed = Self(rawValue: "connectionFailed")
        /// The peer answered with an error reply.
        public static let remote = Self(rawValue: "remote")
        /// The message was refused before sending.
        public static let invalidMessage = Self(rawValue: "invalidMessage")
        /// A received body that cannot be decoded.
        public static let invalidArguments = Self(rawValue: "invalidArguments")
        /// A received message is beyond what the decoder builds.
        public static let limitsExceeded = Self(rawValue: "limitsExceeded")
        /// The connection is closed or was lost.
        public static let disconnected = Self(rawValue: "disconnected")
        /// libdbus could not allocate memory.
        public static let outOfMemory = Self(rawValue: "outOfMemory")

        /// The code's name.
        public var description: String { rawValue }
    }

    /// What kind of failure this is.
    public let code: Code
    /// The D-Bus error name of an error reply (``Code/remote``), like
    /// `org.freedesktop.DBus.Error.NoReply`; `nil` for every other code.
    public let name: String?
    /// The error reply's message (``Code/remote``), else what went wrong; empty when the
    /// code says it all.
    public let message: String
    /// The address of the bus that could not be reached (``Code/connectionFailed``), else `nil`.
    public let address: String?

    /// An error of `code` with its details.
    public init(code: Code, name: String? = nil, message: String = "", address: String? = nil) {
        self.code = code
        self.name = name
        self.message = message
        self.address = address
    }

    /// Connecting to (or registering on) the bus at `address` failed.
    public static func connectionFailed(address: String, reason: String) -> Self {
        Self(code: .connectionFailed, message: reason, address: address)
    }

    /// The peer answered with an error reply. Time-outs arrive as
    /// `org.freedesktop.DBus.Error.NoReply`.
    public static func remote(name: String, message: String) -> Self {
        Self(code: .remote, name: name, message: message)
    }

    /// The message was refused before sending (invalid UTF-8, NUL in a string, invalid object
    /// path, name or signature, nesting too deep, dictionary entry outside an array, ...).
    public static func invalidMessage(_ reason: String) -> Self { Self(code: .invalidMessage, message: reason) }
    /// A received body that cannot be decoded (nesting too deep, unsupported content, ...).
    public static func invalidArguments(_ reason: String) -> Self { Self(code: .invalidArguments, message: reason) }
    /// A received message is beyond what the decoder builds (more values than its budget).
    public static func limitsExceeded(_ reason: String) -> Self { Self(code: .limitsExceeded, message: reason) }

    // The codes again, as members of the error: what `case .remote:` finds in a pattern
    // (beside the functions above of the same base name, which make errors). An error of
    // a code without details is made with `DBusError(code: .disconnected)`.

    /// ``Code/noSessionBus``, for patterns.
    public static var noSessionBus: Code { .noSessionBus }
    /// ``Code/connectionFailed``, for patterns.
    public static var connectionFailed: Code { .connectionFailed }
    /// ``Code/remote``, for patterns.
    public static var remote: Code { .remote }
    /// ``Code/invalidMessage``, for patterns.
    public static var invalidMessage: Code { .invalidMessage }
    /// ``Code/invalidArguments``, for patterns.
    public static var invalidArguments: Code { .invalidArguments }
    /// ``Code/limitsExceeded``, for patterns.
    public static var limitsExceeded: Code { .limitsExceeded }
    /// ``Code/disconnected``, for patterns.
    public static var disconnected: Code { .disconnected }
    /// ``Code/outOfMemory``, for patterns.
    public static var outOfMemory: Code { .outOfMemory }

    /// Whether `error` is of `code`: what lets `case .remote:` match an error.
    public static func ~= (code: Code, error: DBusError) -> Bool {
        error.code == code
    }

    /// Whether this is an error reply named `name`.
    public func isRemote(named name: String) -> Bool {
        code == .remote && self.name == name
    }

    /// A sentence describing the problem and, where possible, what to do about it.
    public var description: String {
        switch code {
        case .noSessionBus:
            "No session bus: DBUS_SESSION_BUS_ADDRESS is not set. Run inside a desktop session, or start one with `dbus-run-session -- <command>`."
        case .connectionFailed:
            "Could not connect to the D-Bus bus at \(address ?? ""): \(message). Check that the bus is running and the address is right."
        case .remote:
            message.isEmpty ? "The peer answered with the error \(name ?? "")." : "\(name ?? ""): \(message)"
        case .invalidMessage:
            "The message was not sent because it is invalid: \(message)."
        case .invalidArguments:
            "The received message could not be decoded: \(message)."
        case .limitsExceeded:
            "The received message was not decoded because it is too large: \(message)."
        case .disconnected:
            "The D-Bus connection is closed or was lost; open a new connection."
        case .outOfMemory:
            "libdbus ran out of memory."
        default:
            message.isEmpty ? "D-Bus error \(code)." : "D-Bus error \(code): \(message)"
        }
    }
}

/// Whether a caught `error` is a ``DBusError`` of `code`: what lets `catch DBusError.remote`
/// and `catch DBusError.disconnected` match.
public func ~= (code: DBusError.Code, error: any Error) -> Bool {
    (error as? DBusError)?.code == code
}
