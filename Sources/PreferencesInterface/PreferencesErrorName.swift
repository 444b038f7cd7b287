/// The D-Bus error name of a refusal: prefsd's own, `io.github.prefsd.Preferences1.Error.X`,
/// and the bus's `InvalidArgs`, with which prefsd answers arguments that do not fit.
///
/// A struct of static members, as swift-system's `Errno` is, not an enum: a refusal a newer
/// prefsd adds reads as a name of its own (``isPrefsds`` and its ``busName``), and a switch
/// over names has a `default`, so no client breaks when the list grows.
public struct PreferencesErrorName: RawRepresentable, Hashable, Sendable {
    /// The full D-Bus error name.
    public let rawValue: String

    /// The error named `rawValue` (a full D-Bus error name).
    public init(rawValue: String) {
        self.rawValue = rawValue
    }

    private init(prefsd name: String) {
        rawValue = Self.prefix + name
    }

    /// No such key or domain.
    public static let notFound = Self(prefsd: "NotFound")
    /// A domain name or key that breaks the naming rules.
    public static let invalidName = Self(prefsd: "InvalidName")
    /// A value that is not a property-list value, or nests too deeply.
    public static let invalidValue = Self(prefsd: "InvalidValue")
    /// The key is forced by an administrator's managed domain.
    public static let forced = Self(prefsd: "Forced")
    /// A domain of that name exists already.
    public static let exists = Self(prefsd: "Exists")
    /// A size limit would be passed.
    public static let quotaExceeded = Self(prefsd: "QuotaExceeded")
    /// The store could not write to disk.
    public static let storageFailed = Self(prefsd: "StorageFailed")
    /// A sandboxed caller reached for a domain that is not its own.
    public static let accessDenied = Self(prefsd: "AccessDenied")
    /// Arguments that contradict each other or do not fit the method: the bus's own
    /// `org.freedesktop.DBus.Error.InvalidArgs`, which prefsd answers with too.
    public static let invalidArguments = Self(rawValue: "org.freedesktop.DBus.Error.InvalidArgs")

    /// prefsd's own error names, as the contract lists them.
    public static let allCases: [Self] = [
        .notFound, .invalidName, .invalidValue, .forced, .exists, .quotaExceeded, .storageFailed, .accessDenied,
    ]

    /// The common prefix of the service's error names.
    public static let prefix = PreferencesBus.errorPrefix

    /// The full D-Bus error name.
    public var busName: String { rawValue }

    /// Whether the name is in prefsd's own namespace (``prefix``).
    public var isPrefsds: Bool { rawValue.hasPrefix(Self.prefix) }

    /// The name without ``prefix`` (`NotFound`), for one of prefsd's own.
    public var shortName: String? {
        isPrefsds ? String(rawValue.dropFirst(Self.prefix.count)) : nil
    }

    /// The error for a full D-Bus error name, when it is in prefsd's namespace.
    public init?(busName: String) {
        guard busName.hasPrefix(Self.prefix), busName.count > Self.prefix.count else { return nil }
        self.init(rawValue: busName)
    }
}
