import PreferencesModel

/// Loading the store in two steps: prefsd answers reads of a domain as soon as that domain
/// is read from disk, while the whole store loads beside it; every other call waits for the
/// whole store (see `PreferencesService+Loading.swift`).
extension DomainState {
    /// A state holding no persistent domain yet, to be filled by ``install(_:entries:leftOut:)``
    /// and completed by ``completeLoad(committed:leftOut:)``.
    static func loading(limits: ServiceLimits) -> DomainState {
        var state = DomainState(committed: [:], limits: limits)
        state.partial = []
        return state
    }

    /// Whether reads of `domain` can be answered: the whole store is loaded, or this domain is.
    func isLoaded(_ domain: DomainName) -> Bool {
        partial?.contains(domain) ?? true
    }

    /// Whether every persistent domain is loaded.
    var isComplete: Bool { partial == nil }

    /// Holds `domain` as read from disk (`entries` empty: no such domain), with the keys
    /// left out of it, unless it is loaded already. Nothing is staged before the whole store
    /// is loaded, so what disk holds is what was committed.
    mutating func install(_ domain: DomainName, entries: [String: PropertyListValue], leftOut keys: [String]) {
        guard var loaded = partial, !loaded.contains(domain) else { return }
        loaded.insert(domain)
        partial = loaded
        committed[domain] = entries.isEmpty ? nil : entries
        leftOut[domain] = keys.isEmpty ? nil : keys
    }

    /// Holds the whole store, as ``DomainStore/loadAll()`` read it, and counts its quotas.
    /// The domains read one by one before are replaced by the same domains read again.
    mutating func completeLoad(committed all: [DomainName: [String: PropertyListValue]], leftOut keys: [DomainName: [String]]) {
        guard partial != nil else { return }
        committed = all
        leftOut = keys
        partial = nil
        countQuotas()
    }
}
