import PreferencesModel
import PreferencesStore

extension DomainState {
    /// `Write`: sets one key.
    mutating func write(domain: DomainName, key: String, value: PropertyListValue) throws(PreferencesServiceError) -> Effect {
        try change(domain, set: [key: value], remove: [])
    }

    /// `Remove`: removes one key; an absent key is no change.
    mutating func remove(domain: DomainName, key: String) throws(PreferencesServiceError) -> Effect {
        try change(domain, set: [:], remove: [key])
    }

    /// `Apply`: sets and removes keys of one domain as one batch.
    mutating func apply(domain: DomainName, set: [String: PropertyListValue], remove: [String]) throws(PreferencesServiceError) -> Effect {
        if let key = remove.first(where: { set[$0] != nil }) {
            throw .invalidArguments("Apply both sets and removes the key \"\(key)\"; a key may appear in one of the two lists only")
        }
        return try change(domain, set: set, remove: remove)
    }

    /// `ReplaceDomain`: makes a persistent domain hold exactly `values`.
    mutating func replaceDomain(_ domain: DomainName, with values: [String: PropertyListValue]) throws(PreferencesServiceError) -> Effect {
        if volatile[domain] != nil {
            throw .exists("\(domain) is a volatile domain; remove it with RemoveVolatileDomain before replacing it with a persistent one")
        }
        let current = projectedEntries(domain: domain)
        let set = values.filter { current[$0.key] != $0.value }
        let remove = current.keys.filter { values[$0] == nil }.sorted()
        return try change(domain, set: set, remove: remove)
    }

    /// `RemoveDomain`: removes every key of a persistent domain.
    mutating func removeDomain(_ domain: DomainName) throws(PreferencesServiceError) -> Effect {
        guard volatile[domain] == nil else { return .unchanged(afterPending: false) }
        let keys = projectedEntries(domain: domain).keys.sorted()
        return try change(domain, set: [:], remove: keys, wholeDomain: true)
    }

    /// `SetVolatileDomain`: creates a volatile domain.
    mutating func setVolatileDomain(_ domain: DomainName, values: [String: PropertyListValue]) throws(PreferencesServiceError) -> Effect {
        if volatile[domain] != nil || persistentDomainExists(domain) {
            let kind = volatile[domain] != nil ? "volatile" : "persistent"
            throw .exists("a \(kind) domain named \(domain) exists already; remove it first")
        }
        let bytes = Self.bytes(of: values)
        try checkVolatileQuota(adding: bytes)
        volatile[domain] = values
        volatileBytes += bytes
        if values.isEmpty { return .unchanged(afterPending: false) }
        return .volatile(Change(domain: domain, changed: values))
    }

    /// `RemoveVolatileDomain`: drops a volatile domain; an absent one is no change.
    mutating func removeVolatileDomain(_ domain: DomainName) -> Effect {
        guard let entries = volatile.removeValue(forKey: domain) else { return .unchanged(afterPending: false) }
        volatileBytes -= Self.bytes(of: entries)
        if entries.isEmpty { return .unchanged(afterPending: false) }
        return .volatile(Change(domain: domain, removed: entries.keys.sorted()))
    }

    // MARK: The one path every change takes

    /// Checks and applies a change to one domain: in place for a volatile domain, staged
    /// as a batch for a persistent one. Keys that would not change are dropped; a change
    /// that is left empty is no change.
    private mutating func change(
        _ domain: DomainName, set: [String: PropertyListValue], remove: [String], wholeDomain: Bool = false
    ) throws(PreferencesServiceError) -> Effect {
        if let key = set.keys.sorted().first(where: { isForced(domain: domain, key: $0) })
            ?? remove.first(where: { isForced(domain: domain, key: $0) }) {
            throw .forced("\(domain) \"\(key)\" is forced by the administrator's managed preferences and cannot be changed")
        }
        if let entries = volatile[domain] {
            let delta = try volatileDelta(entries, set: set, remove: remove)
            guard let change = Self.apply(set: set, remove: remove, to: &volatile[domain, default: [:]], domain: domain) else {
                return .unchanged(afterPending: false)
            }
            volatileBytes += delta
            return .volatile(change)
        }
        return try stage(domain, set: set, remove: remove, wholeDomain: wholeDomain)
    }

    /// Stages a persistent change as the next batch.
    private mutating func stage(
        _ domain: DomainName, set: [String: PropertyListValue], remove: [String], wholeDomain: Bool
    ) throws(PreferencesServiceError) -> Effect {
        let setting = set.filter { projected(domain: domain, key: $0.key) != $0.value }
        let removing = remove.filter { projected(domain: domain, key: $0) != nil }
        if setting.isEmpty && removing.isEmpty { return .unchanged(afterPending: batchesInFlight > 0) }

        var delta = 0
        for (key, value) in setting {
            delta += Self.bytes(key: key, value: value)
            if let old = projected(domain: domain, key: key) { delta -= Self.bytes(key: key, value: old) }
        }
        for key in removing {
            if let old = projected(domain: domain, key: key) { delta -= Self.bytes(key: key, value: old) }
        }
        let newDomainBytes = (domainBytes[domain] ?? 0) + delta
        if delta > 0 && newDomainBytes > limits.domainBytes {
            throw .quotaExceeded("the domain \(domain) would hold \(newDomainBytes) bytes, over its limit of \(limits.domainBytes) (prefsd --max-domain-size); remove keys from it first")
        }
        if delta > 0 && storeBytes + delta > limits.storeBytes {
            throw .quotaExceeded("the store would hold \(storeBytes + delta) bytes, over its limit of \(limits.storeBytes) (prefsd --max-store-size); remove unused domains first")
        }

        lastSequence += 1
        let sequence = lastSequence
        var mutations: [StoreMutation] = wholeDomain ? [.removeDomain(domain)] : []
        for key in removing {
            staged[domain, default: [:]][key] = (nil, sequence)
            if !wholeDomain { mutations.append(.remove(domain, key: key)) }
        }
        for (key, value) in setting.sorted(by: { $0.key < $1.key }) {
            staged[domain, default: [:]][key] = (value, sequence)
            mutations.append(.set(domain, key: key, value: value))
        }
        domainBytes[domain] = newDomainBytes
        storeBytes += delta
        batchesInFlight += 1
        return .persistent(Batch(sequence: sequence, domain: domain, mutations: mutations))
    }

    /// The bytes a change adds to a volatile domain, checked against the volatile quota.
    private func volatileDelta(_ entries: [String: PropertyListValue], set: [String: PropertyListValue], remove: [String]) throws(PreferencesServiceError) -> Int {
        var delta = 0
        for (key, value) in set {
            delta += Self.bytes(key: key, value: value)
            if let old = entries[key] { delta -= Self.bytes(key: key, value: old) }
        }
        for key in remove {
            if let old = entries[key] { delta -= Self.bytes(key: key, value: old) }
        }
        if delta > 0 { try checkVolatileQuota(adding: delta) }
        return delta
    }

    private func checkVolatileQuota(adding bytes: Int) throws(PreferencesServiceError) {
        if volatileBytes + bytes > limits.volatileBytes {
            throw .quotaExceeded("volatile domains would hold \(volatileBytes + bytes) bytes, over their limit of \(limits.volatileBytes) (prefsd --max-volatile-size); remove a volatile domain first")
        }
    }

    /// Applies sets and removals to `entries`, returning what changed, or `nil` when
    /// nothing did.
    static func apply(
        set: [String: PropertyListValue], remove: some Sequence<String>,
        to entries: inout [String: PropertyListValue], domain: DomainName
    ) -> Change? {
        var change = Change(domain: domain)
        for (key, value) in set where entries[key] != value {
            entries[key] = value
            change.changed[key] = value
        }
        for key in remove where entries.removeValue(forKey: key) != nil {
            change.removed.append(key)
        }
        return change.isEmpty ? nil : change
    }
}
