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
    /// Changes no stored value, only records the GVariant type `key`'s value was given
    /// through dconf's protocol (`nil`: forgets it), which dconf's database file gives the
    /// value back in. Not recorded in the journal.
    case setGVariantType(DomainName, key: String, type: String?)
}

extension StoreMutation {
    /// What keeps the mutation out of the store, naming its domain and key, or `nil`: a key
    /// set that breaks `PreferenceKey.storedKeyProblem`, a value set or noted that breaks
    /// `PropertyListValue.storeProblem`. Removals always pass, so that whatever a store
    /// holds can be removed.
    public var problem: String? {
        switch self {
        case .set(let domain, let key, let value):
            if let problem = PreferenceKey.storedKeyProblem(key) { return "the key \(key.debugDescription) of \(domain): \(problem)" }
            if let problem = value.storeProblem { return "the value of \(domain) \(key.debugDescription): \(problem)" }
            return nil
        case .note(let domain, let key, let value, let previous):
            for noted in [value, previous] {
                if let problem = noted?.storeProblem { return "a value noted for \(domain) \(key.debugDescription): \(problem)" }
            }
            return nil
        case .remove, .removeDomain, .setGVariantType:
            return nil
        }
    }
}
