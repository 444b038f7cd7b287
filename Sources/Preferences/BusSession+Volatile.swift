import DBus
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

/// The volatile namespace: domains kept in prefsd's memory, apart from the persistent ones
/// and never searched. They are read from the service each time, with this process's
/// changes not answered yet laid over, so a change shows at once in the whole process.
extension BusSession {
    /// Creates (`values`) or removes (`nil`) a volatile domain; sent without waiting.
    /// - Returns: false when this process already has a volatile domain of that name pending.
    func changeVolatile(_ domain: DomainName, to values: [String: PropertyListValue]?) -> Bool {
        let generation = state.withLock { state -> UInt64? in
            if values != nil, state.volatilePending[domain].map({ $0.values != nil }) == true { return nil }
            state.volatileGeneration += 1
            state.volatilePending[domain] = PendingVolatile(values: values, generation: state.volatileGeneration)
            return state.volatileGeneration
        }
        guard let generation else { return false }
        let message = values.map { PreferencesCall.setVolatileDomain(domain.rawValue, $0).message }
            ?? PreferencesCall.removeVolatileDomain(domain.rawValue).message
        sendVolatile(message) { [self] _ in
            state.withLock { state in
                if state.volatilePending[domain]?.generation == generation { state.volatilePending[domain] = nil }
            }
        }
        return true
    }

    /// A volatile domain's contents, or `nil` when there is none (or prefsd cannot be reached).
    func volatileDomain(_ domain: DomainName) -> [String: PropertyListValue]? {
        if let pending = state.withLock({ $0.volatilePending[domain] }) { return pending.values }
        return try? callBlocking(PreferencesCall.readVolatileDomain(domain.rawValue)).value
    }

    /// The names of the volatile domains in prefsd, with this process's pending changes.
    func volatileDomainNames() -> [String] {
        var names = Set((try? callBlocking(PreferencesCall.volatileDomains()).value) ?? [])
        for (domain, pending) in state.withLock({ $0.volatilePending }) {
            if pending.values == nil { names.remove(domain.rawValue) } else { names.insert(domain.rawValue) }
        }
        return names.sorted()
    }
}
