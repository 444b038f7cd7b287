import DBus
import PreferencesModel

/// Why prefsd refused a call: the one list of the service's refusals, each with the
/// message a person reads, and the one mapping between them and their D-Bus error names.
///
/// The service throws and answers with these (``PreferencesServiceError`` is this type);
/// a client reads them back from an error reply with ``init(busErrorName:message:)``,
/// through the one table of error names, ``PreferencesFailure``
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
        switch PreferencesFailure(errorName: busErrorName) {
        case .invalidArguments: self = .invalidArguments(message)
        case .refused(.notFound): self = .notFound(message)
        case .refused(.invalidName): self = .invalidName(message)
        case .refused(.invalidValue): self = .invalidValue(message)
        case .refused(.forced): self = .forced(message)
        case .refused(.exists): self = .exists(message)
        case .refused(.quotaExceeded): self = .quotaExceeded(message)
        case .refused(.storageFailed): self = .storageFailed(message)
        case .refused(.accessDenied): self = .accessDenied(message)
        case .limitsExceeded, .unavailable, .other: return nil
        }
    }

    /// What the refusal means to a client, as ``PreferencesFailure`` reads its error name.
    public var failure: PreferencesFailure { PreferencesFailure(errorName: busErrorName) }

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
