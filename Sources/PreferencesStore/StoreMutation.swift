import PreferencesModel

/// One change to the durable store, applied inside a ``DomainStore/commit(_:completion:)``
/// batch.
public enum StoreMutation: Sendable, Hashable {
    /// Stores `value` under `key` in the domain, replacing any previous value.
    case set(DomainName, key: String, value: PropertyListValue)
    /// Deletes `key` from the domain; deleting an absent key is not an error.
    case remove(DomainName, key: String)
    /// Deletes every key of the domain.
    case removeDomain(DomainName)
}
