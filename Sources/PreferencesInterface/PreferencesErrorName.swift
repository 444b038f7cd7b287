/// The service's own D-Bus errors, named `io.github.prefsd.Preferences1.Error.<case>`.
public enum PreferencesErrorName: String, Sendable, CaseIterable {
    /// No such key or domain.
    case notFound = "NotFound"
    /// A domain name or key that breaks the naming rules.
    case invalidName = "InvalidName"
    /// A value that is not a property-list value, or nests too deeply.
    case invalidValue = "InvalidValue"
    /// The key is forced by an administrator's managed domain.
    case forced = "Forced"
    /// A domain of that name exists already.
    case exists = "Exists"
    /// A size limit would be passed.
    case quotaExceeded = "QuotaExceeded"
    /// The store could not write to disk.
    case storageFailed = "StorageFailed"
    /// A sandboxed caller reached for a domain that is not its own.
    case accessDenied = "AccessDenied"

    /// The common prefix of the service's error names.
    public static let prefix = PreferencesBus.errorPrefix

    /// The full D-Bus error name.
    public var busName: String { Self.prefix + rawValue }

    /// The error for a full D-Bus error name, when it is one of the service's.
    public init?(busName: String) {
        guard busName.hasPrefix(Self.prefix) else { return nil }
        self.init(rawValue: String(busName.dropFirst(Self.prefix.count)))
    }
}
