import DBus

extension DBusValue {
    /// An `as` value.
    public static func stringArray(_ strings: [String]) -> DBusValue {
        .array(element: .string, strings.map { .string($0) })
    }
}
