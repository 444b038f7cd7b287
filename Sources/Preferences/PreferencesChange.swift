import PreferencesModel

/// A change of a key's effective value, as a preferences object sees it through its
/// search list.
public struct PreferencesChange: Sendable, Hashable {
    /// The key whose value changed.
    public var key: String
    /// The new effective value, or `nil` when no domain of the search list has the key now.
    public var value: PropertyListValue?

    /// Makes a change.
    public init(key: String, value: PropertyListValue?) {
        self.key = key
        self.value = value
    }
}
