import DBus
import PreferencesModel
import PreferencesProtocol

/// Why a preferences operation failed, in words a person can act on.
public enum PreferencesError: Error, Sendable, Hashable, CustomStringConvertible {
    /// There is no bus to reach prefsd on, or prefsd could not be reached or started.
    case serviceUnavailable(String)
    /// The key or domain name is not valid.
    case invalidName(String)
    /// The value is not a property-list value.
    case invalidValue(String)
    /// An administrator forces the key.
    case forced(String)
    /// The key or domain does not exist.
    case notFound(String)
    /// A domain of that name exists already.
    case exists(String)
    /// A size limit of the service would be passed.
    case quotaExceeded(String)
    /// The service could not write to disk.
    case storageFailed(String)
    /// The service refused the call for another reason.
    case refused(name: String, message: String)

    /// A sentence a person can act on.
    public var description: String {
        switch self {
        case .serviceUnavailable(let text): "prefsd is unavailable: \(text)"
        case .invalidName(let text), .invalidValue(let text), .forced(let text), .notFound(let text),
             .exists(let text), .quotaExceeded(let text), .storageFailed(let text):
            text
        case .refused(let name, let message): "\(name): \(message)"
        }
    }

    /// Whether the error is about what was written (a name, a value, a forced key, a quota)
    /// rather than about reaching prefsd or its disk: another write may still succeed.
    var concernsValues: Bool {
        switch self {
        case .serviceUnavailable, .storageFailed: false
        case .invalidName, .invalidValue, .forced, .notFound, .exists, .quotaExceeded, .refused: true
        }
    }

    /// The error for a failed bus call.
    init(_ error: DBusError) {
        guard case .remote(let name, let message) = error else {
            self = .serviceUnavailable("\(error)")
            return
        }
        switch PreferencesErrorName(busName: name) {
        case .notFound: self = .notFound(message)
        case .invalidName: self = .invalidName(message)
        case .invalidValue: self = .invalidValue(message)
        case .forced: self = .forced(message)
        case .exists: self = .exists(message)
        case .quotaExceeded: self = .quotaExceeded(message)
        case .storageFailed: self = .storageFailed(message)
        case .accessDenied: self = .refused(name: name, message: message)
        case nil:
            if name.hasPrefix("org.freedesktop.DBus.Error.ServiceUnknown") || name.hasSuffix(".NoReply")
                || name.hasSuffix(".Spawn.ExecFailed") || name.hasSuffix(".Disconnected") {
                self = .serviceUnavailable("\(message) (\(name))")
            } else {
                self = .refused(name: name, message: message)
            }
        }
    }

    /// The error for a name or value the model refused.
    init(_ error: PreferencesModelError) {
        switch error {
        case .invalidDomainName, .invalidKey: self = .invalidName(error.description)
        case .invalidValue, .undecodableValue: self = .invalidValue(error.description)
        }
    }
}
