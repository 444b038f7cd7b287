import PreferencesModel

/// One change to the durable store, applied inside a ``DomainStore/commit(_:who:completion:)``
/// batch.
public enum StoreMutation: Sendable, Hashable {
    /// Stores `value` under `key` in the domain, replacing any previous value.
    case set(DomainName, key: String, value: PropertyListValue)
    /// Deletes `key` from the domain; deleting an absent key is not an error.
    case remove(DomainName, key: String)
    /// Deletes every key of the domain.
    case removeDomain(DomainName)
    /// Changes no stored value, only notes in the journal that what readers see of `key`
    /// went from `previous` to `value` (`nil`: absent): an administrator's managed file
    /// changed. A revert never undoes such a note.
    case note(DomainName, key: String, value: PropertyListValue?, previous: PropertyListValue?)
}
