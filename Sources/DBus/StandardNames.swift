/// Standard D-Bus error names (`org.freedesktop.DBus.Error.*`) a program answers with or
/// looks for in a failure.
public enum StandardErrorName {
    /// Arguments of the wrong type or number.
    public static let invalidArgs = "org.freedesktop.DBus.Error.InvalidArgs"
    /// A method the object does not have.
    public static let unknownMethod = "org.freedesktop.DBus.Error.UnknownMethod"
    /// An interface the object does not have.
    public static let unknownInterface = "org.freedesktop.DBus.Error.UnknownInterface"
    /// A property the interface does not have.
    public static let unknownProperty = "org.freedesktop.DBus.Error.UnknownProperty"
    /// A `Set` on a read-only property.
    public static let propertyReadOnly = "org.freedesktop.DBus.Error.PropertyReadOnly"
    /// The service could not do the work for a reason of its own.
    public static let failed = "org.freedesktop.DBus.Error.Failed"
    /// A reply or message would pass a limit of the bus.
    public static let limitsExceeded = "org.freedesktop.DBus.Error.LimitsExceeded"
    /// The bus name asked about has no owner (`GetNameOwner`, `GetConnectionUnixProcessID`).
    public static let nameHasNoOwner = "org.freedesktop.DBus.Error.NameHasNoOwner"
    /// No reply came within the call's time-out.
    public static let noReply = "org.freedesktop.DBus.Error.NoReply"
    /// The name is owned by another connection already.
    public static let addressInUse = "org.freedesktop.DBus.Error.AddressInUse"
}

/// The standard interfaces every D-Bus object may answer.
public enum StandardInterface {
    /// `org.freedesktop.DBus.Introspectable`.
    public static let introspectable = "org.freedesktop.DBus.Introspectable"
    /// `org.freedesktop.DBus.Peer`.
    public static let peer = "org.freedesktop.DBus.Peer"
    /// `org.freedesktop.DBus.Properties`.
    public static let properties = "org.freedesktop.DBus.Properties"
}

extension DBusValue {
    /// An `as` value.
    public static func stringArray(_ strings: [String]) -> DBusValue {
        .array(element: .string, strings.map { .string($0) })
    }
}
