import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

/// Whole persistent domains as this process sees them: loaded into the cache (and kept
/// true by the service's signals) with this process's changes not answered yet laid over.
extension BusSession {
    /// A persistent domain's contents, or `nil` when it has no key (or prefsd cannot be
    /// reached and this process has not changed it).
    func persistentDomain(_ domain: DomainName) -> [String: PropertyListValue]? {
        ensureLoaded([domain])
        let entries = state.withLock { state -> [String: PropertyListValue]? in
            guard state.cache.isLoaded(domain) || state.cache.hasLocalChanges(domain) else { return nil }
            return state.cache.entries(domain)
        }
        guard let entries, !entries.isEmpty else { return nil }
        return entries
    }

    /// The names of the persistent domains, sorted, with this process's pending changes.
    func persistentDomainNames() -> [String] {
        var names = Set((try? callBlocking(PreferencesCall.domains()).value) ?? [])
        state.withLock { state in
            for domain in Set(state.cache.domains.keys).union(state.cache.changedDomains) {
                let entries = state.cache.entries(domain)
                if !entries.isEmpty {
                    names.insert(domain.rawValue)
                } else if state.cache.isLoaded(domain) || state.cache.replaced[domain] != nil {
                    names.remove(domain.rawValue)
                }
            }
        }
        return names.sorted()
    }
}
