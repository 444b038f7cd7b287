import DBus
import PreferencesModel

/// Why prefsd refused a call: the one list of the service's refusals, each with the
/// message a person reads, and the one mapping between them and their D-Bus error names.
///
/// The service throws and answers with these (``PreferencesServiceError`` is this type);
/// a client reads them back from an error reply with ``init(busErrorName:message:)``
/// (`PreferencesProxyError` carries them in its `refused` case).
public enum PreferencesRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// No such key or domain (`Error.NotFound`).
    case notFound(String)
    /// A domain name or key that breaks the naming rules (`Error.InvalidName`).
    case invalidName(String)
    /// A value that cannot be stored (`Error.InvalidValue`).
    case invalidValue(String)
    /// The call would change a key an administrator forces (`Error.Forced`).
    case forced(String)
    /// A domain of that name exists already (`Error.Exists`).
    case exists(String)
    /// The call would pass a size limit (`Error.QuotaExceeded`).
    case quotaExceeded(String)
    /// The store could not write to disk (`Error.StorageFailed`).
    case storageFailed(String)
    /// A sandboxed caller reached for a domain that is not its own (`Error.AccessDenied`).
    case accessDenied(String)
    /// Arguments that contradict each other or do not fit the method
    /// (`org.freedesktop.DBus.Error.InvalidArgs`).
    case invalidArguments(String)

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
        case .accessDenied: PreferencesErrorName.accessDenied.busName
        case .invalidArguments: StandardErrorName.invalidArgs
        }
    }

    /// The refusal an error reply named `busErrorName` carries, with its `message`; `nil`
    /// for a name that is none of the service's refusals.
    public init?(busErrorName: String, message: String) {
        if busErrorName == StandardErrorName.invalidArgs {
            self = .invalidArguments(message)
            return
        }
        guard let name = PreferencesErrorName(busName: busErrorName) else { return nil }
        switch name {
        case .notFound: self = .notFound(message)
        case .invalidName: self = .invalidName(message)
        case .invalidValue: self = .invalidValue(message)
        case .forced: self = .forced(message)
        case .exists: self = .exists(message)
        case .quotaExceeded: self = .quotaExceeded(message)
        case .storageFailed: self = .storageFailed(message)
        case .accessDenied: self = .accessDenied(message)
        }
    }

    /// The refusal of a name or value the preferences model refused.
    public init(_ error: PreferencesModelError) {
        switch error {
        case .invalidDomainName, .invalidKey: self = .invalidName(error.description)
        case .invalidValue, .undecodableValue: self = .invalidValue(error.description)
        }
    }

    /// The message a person reads.
    public var description: String {
        switch self {
        case .notFound(let text), .invalidName(let text), .invalidValue(let text), .forced(let text),
            .exists(let text), .quotaExceeded(let text), .storageFailed(let text), .accessDenied(let text),
            .invalidArguments(let text):
            text
        }
    }
}
