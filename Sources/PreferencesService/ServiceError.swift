import DBus
import PreferencesModel
import PreferencesProtocol

/// Why the service refused a call, with the D-Bus error it is answered with.
public enum PreferencesServiceError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No such key or domain.
    case notFound(String)
    /// A domain name or key that breaks the naming rules.
    case invalidName(String)
    /// A value that cannot be stored.
    case invalidValue(String)
    /// The call would change a key an administrator forces.
    case forced(String)
    /// A domain of that name exists already.
    case exists(String)
    /// The call would pass a size limit.
    case quotaExceeded(String)
    /// The store could not write to disk.
    case storageFailed(String)
    /// Arguments that contradict each other or do not fit the method.
    case invalidArguments(String)
    /// A sandboxed caller reached for a domain that is not its own.
    case accessDenied(String)

    /// The D-Bus error name the call is answered with.
    public var busErrorName: String {
        switch self {
        case .notFound: PreferencesErrorName.notFound.busName
        case .invalidName: PreferencesErrorName.invalidName.busName
        case .invalidValue: PreferencesErrorName.invalidValue.busName
        case .forced: PreferencesErrorName.forced.busName
        case .exists: PreferencesErrorName.exists.busName
        case .quotaExceeded: PreferencesErrorName.quotaExceeded.busName
        case .storageFailed: PreferencesErrorName.storageFailed.busName
        case .invalidArguments: StandardErrorName.invalidArgs
        case .accessDenied: PreferencesErrorName.accessDenied.busName
        }
    }

    /// The message a person reads.
    public var description: String {
        switch self {
        case .notFound(let text), .invalidName(let text), .invalidValue(let text), .forced(let text),
             .exists(let text), .quotaExceeded(let text), .storageFailed(let text), .invalidArguments(let text), .accessDenied(let text):
            text
        }
    }

    /// The service error for a refusal of the preferences model.
    init(_ error: PreferencesModelError) {
        switch error {
        case .invalidDomainName, .invalidKey: self = .invalidName(error.description)
        case .invalidValue, .undecodableValue: self = .invalidValue(error.description)
        }
    }
}
