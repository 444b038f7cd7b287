import DBus
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

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

    /// The error for a failed bus call, by the proxy's one rule for every client (no bus,
    /// `ServiceUnknown`, `NameHasNoOwner`, `NoReply`, `Timeout`, failed activation: unavailable).
    init(_ error: DBusError) {
        self.init(PreferencesProxyError(error))
    }

    /// The error for a failed call of the proxy.
    init(_ error: PreferencesProxyError) {
        switch error {
        case .serviceUnavailable: self = .serviceUnavailable(error.description)
        case .notFound(let text): self = .notFound(text)
        case .invalidName(let text): self = .invalidName(text)
        case .invalidValue(let text), .invalidArguments(let text), .invalidRequest(let text): self = .invalidValue(text)
        case .forced(let text): self = .forced(text)
        case .exists(let text): self = .exists(text)
        case .quotaExceeded(let text), .limitsExceeded(let text): self = .quotaExceeded(text)
        case .storageFailed(let text): self = .storageFailed(text)
        case .accessDenied(let text): self = .refused(name: PreferencesErrorName.accessDenied.busName, message: text)
        case .contended, .unexpectedReply: self = .refused(name: "prefsd", message: error.description)
        case .refused(let name, let message): self = .refused(name: name, message: message)
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
