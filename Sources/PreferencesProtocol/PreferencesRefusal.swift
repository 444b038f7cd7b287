import PreferencesModel

/// Why prefsd refused a call: the refusal's error name and the message a person reads.
///
/// The service throws and answers with these (``PreferencesServiceError`` is this type);
/// a client reads them back from an error reply with ``init(busErrorName:message:)``,
/// through the one table of error names, ``PreferencesFailure``
/// (`PreferencesProxyError` carries them in its `refused` case).
///
/// A struct, not an enum, so that a refusal a newer prefsd adds is one more
/// ``PreferencesErrorName`` and breaks no client's `switch`. Match one by its name:
/// `case .notFound:` in a `switch` over a refusal (or `.refused(.notFound)` over a
/// `PreferencesProxyError`) compares ``name``.
public struct PreferencesRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// The D-Bus error name the call is answered with.
    public var name: PreferencesErrorName
    /// The message a person reads.
    public var message: String

    /// A refusal named `name`, with `message`.
    public init(_ name: PreferencesErrorName, _ message: String) {
        self.name = name
        self.message = message
    }

    /// No such key or domain (`Error.NotFound`).
    public static func notFound(_ message: String) -> Self { Self(.notFound, message) }
    /// A domain name or key that breaks the naming rules (`Error.InvalidName`).
    public static func invalidName(_ message: String) -> Self { Self(.invalidName, message) }
    /// A value that cannot be stored (`Error.InvalidValue`).
    public static func invalidValue(_ message: String) -> Self { Self(.invalidValue, message) }
    /// The call would change a key an administrator forces (`Error.Forced`).
    public static func forced(_ message: String) -> Self { Self(.forced, message) }
    /// A domain of that name exists already (`Error.Exists`).
    public static func exists(_ message: String) -> Self { Self(.exists, message) }
    /// The call would pass a size limit (`Error.QuotaExceeded`).
    public static func quotaExceeded(_ message: String) -> Self { Self(.quotaExceeded, message) }
    /// The store could not write to disk (`Error.StorageFailed`).
    public static func storageFailed(_ message: String) -> Self { Self(.storageFailed, message) }
    /// A sandboxed caller reached for a domain that is not its own (`Error.AccessDenied`).
    public static func accessDenied(_ message: String) -> Self { Self(.accessDenied, message) }
    /// Arguments that contradict each other or do not fit the method
    /// (`org.freedesktop.DBus.Error.InvalidArgs`).
    public static func invalidArguments(_ message: String) -> Self { Self(.invalidArguments, message) }

    // The names again, as members of the refusal: what `case .notFound:` finds in a
    // pattern (beside the functions above of the same base name, which make refusals).

    /// ``PreferencesErrorName/notFound``, for patterns.
    public static var notFound: PreferencesErrorName { .notFound }
    /// ``PreferencesErrorName/invalidName``, for patterns.
    public static var invalidName: PreferencesErrorName { .invalidName }
    /// ``PreferencesErrorName/invalidValue``, for patterns.
    public static var invalidValue: PreferencesErrorName { .invalidValue }
    /// ``PreferencesErrorName/forced``, for patterns.
    public static var forced: PreferencesErrorName { .forced }
    /// ``PreferencesErrorName/exists``, for patterns.
    public static var exists: PreferencesErrorName { .exists }
    /// ``PreferencesErrorName/quotaExceeded``, for patterns.
    public static var quotaExceeded: PreferencesErrorName { .quotaExceeded }
    /// ``PreferencesErrorName/storageFailed``, for patterns.
    public static var storageFailed: PreferencesErrorName { .storageFailed }
    /// ``PreferencesErrorName/accessDenied``, for patterns.
    public static var accessDenied: PreferencesErrorName { .accessDenied }
    /// ``PreferencesErrorName/invalidArguments``, for patterns.
    public static var invalidArguments: PreferencesErrorName { .invalidArguments }

    /// The D-Bus error name the call is answered with.
    public var busErrorName: String { name.busName }

    /// The refusal an error reply named `busErrorName` carries, with its `message`; `nil`
    /// for a name that is none of the service's refusals (as ``PreferencesFailure`` reads it).
    public init?(busErrorName: String, message: String) {
        guard case .refused(let name) = PreferencesFailure(errorName: busErrorName) else { return nil }
        self.init(name, message)
    }

    /// What the refusal means to a client, as ``PreferencesFailure`` reads its error name.
    public var failure: PreferencesFailure { .refused(name) }

    /// The refusal of a name or value the preferences model refused.
    public init(_ error: PreferencesModelError) {
        switch error {
        case .invalidDomainName, .invalidKey: self.init(.invalidName, error.description)
        case .invalidValue, .undecodableValue: self.init(.invalidValue, error.description)
        }
    }

    /// The message a person reads.
    public var description: String { message }

    /// Whether `refusal` is named `name`: what lets `case .notFound:` match a refusal.
    public static func ~= (name: PreferencesErrorName, refusal: PreferencesRefusal) -> Bool {
        refusal.name == name
    }
}
