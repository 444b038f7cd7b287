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

    /// `ApplyIf`: `Apply`, only when every key of `expected` has exactly that value and
    /// every key of `absent` is absent once the batches in flight are durable, as a read
    /// answers them (an administrator's default counts). Returns
    /// `nil`, changing nothing, when the expectation does not hold.
    mutating func applyIf(
        domain: DomainName, expected: [String: PropertyListValue], absent: [String],
        set: [String: PropertyListValue], remove: [String]
    ) throws(PreferencesServiceError) -> Effect? {
        if let key = absent.first(where: { expected[$0] != nil }) {
            throw .invalidArguments("ApplyIf both expects a value for \"\(key)\" and expects it absent; a key may appear in one of the two lists only")
        }
        // A forced key is refused before the expectation is judged: a reader sees the
        // administrator's value, never the stored one it would be compared with.
        try refuseForced(domain, set: set, remove: remove)
        // Judged by what a read answers (the caller read it): the user's value, else the
        // administrator's default.
        let holds =
            expected.allSatisfy { projectedVisible(domain: domain, key: $0.key) == $0.value }
            && absent.allSatisfy { projectedVisible(domain: domain, key: $0) == nil }
        guard holds else { return nil }
        return try apply(domain: domain, set: set, remove: remove)
    }

    /// `ReplaceDomain`: makes a persistent domain hold exactly `values`.
    mutating func replaceDomain(_ domain: DomainName, with values: [String: PropertyListValue]) throws(PreferencesServiceError) -> Effect {
        let current = projectedEntries(domain: domain)
        let set = values.filter { current[$0.key] != $0.value }
        let remove = current.keys.filter { values[$0] == nil }.sorted()
        return try change(domain, set: set, remove: remove)
    }

    /// `RemoveDomain`: removes every key of a persistent domain.
    mutating func removeDomain(_ domain: DomainName) throws(PreferencesServiceError) -> Effect {
        let keys = projectedEntries(domain: domain).keys.sorted()
        return try change(domain, set: [:], remove: keys, wholeDomain: true)
    }

    /// `SetVolatileDomain`: creates a volatile domain. Only a volatile domain of the same
    /// name is in the way: persistent domains are another namespace.
    mutating func setVolatileDomain(_ domain: DomainName, values: [String: PropertyListValue]) throws(PreferencesServiceError) -> Effect {
        if volatile[domain] != nil {
            throw .exists("a volatile domain named \(domain) exists already; remove it with RemoveVolatileDomain first")
        }
        if volatile.count >= limits.volatileDomainCount {
            throw .quotaExceeded("there are \(volatile.count) volatile domains, the most allowed (prefsd --max-volatile-domains); remove one first")
        }
        try checkKeyCount(values.count, domain: domain)
        let bytes = Self.bytes(of: values, domain: domain)
        try checkApplicationVolatileShare(adding: bytes)
        try checkVolatileQuota(adding: bytes)
        volatile[domain] = values
        volatileBytes += bytes
        account(domain, bytes: bytes, domains: 1, volatile: true)
        if values.isEmpty { return .unchanged(afterPending: false) }
        return .volatile(Change(domain: domain, changed: values))
    }

    /// `RemoveVolatileDomain`: drops a volatile domain; an absent one is no change.
    mutating func removeVolatileDomain(_ domain: DomainName) -> Effect {
        guard let entries = volatile.removeValue(forKey: domain) else { return .unchanged(afterPending: false) }
        let bytes = Self.bytes(of: entries, domain: domain)
        volatileBytes -= bytes
        account(domain, bytes: -bytes, domains: -1, volatile: true)
        if entries.isEmpty { return .unchanged(afterPending: false) }
        return .volatile(Change(domain: domain, removed: entries.keys.sorted()))
    }

    // MARK: The one path every persistent change takes

    /// Checks a change to one persistent domain and stages it as a batch. Keys that would
    /// not change are dropped; a change that is left empty is no change.
    private mutating func change(
        _ domain: DomainName, set: [String: PropertyListValue], remove: [String], wholeDomain: Bool = false
    ) throws(PreferencesServiceError) -> Effect {
        try refuseForced(domain, set: set, remove: remove)
        let types = try schemaTypes(domain, set: set)
        return try stage(domain, set: set, remove: remove, wholeDomain: wholeDomain, types: types)
    }

    /// Stages a persistent change as the next batch, each value set with its GVariant type
    /// in `types` recorded beside it.
    private mutating func stage(
        _ domain: DomainName, set: [String: PropertyListValue], remove: [String], wholeDomain: Bool, types: [String: String?]
    ) throws(PreferencesServiceError) -> Effect {
        let setting = set.filter { projected(domain: domain, key: $0.key) != $0.value }
        let removing = remove.filter { projected(domain: domain, key: $0) != nil }
        // Nearly always no row was left out: then no list of the touched keys is made.
        let leftOutRemovals = leftOut[domain] == nil ? [] : leftOutKeys(domain, touchedBy: Array(set.keys) + remove, wholeDomain: wholeDomain)
        if setting.isEmpty && removing.isEmpty && leftOutRemovals.isEmpty { return .unchanged(afterPending: batchesInFlight > 0) }

        var delta = 0
        var keyDelta = 0
        for (key, value) in setting {
            delta += Self.entryBytes(domain: domain, key: key, value: value)
            if let old = projected(domain: domain, key: key) {
                delta -= Self.entryBytes(domain: domain, key: key, value: old)
            } else {
                keyDelta += 1
            }
        }
        for key in removing {
            if let old = projected(domain: domain, key: key) {
                delta -= Self.entryBytes(domain: domain, key: key, value: old)
                keyDelta -= 1
            }
        }
        let oldKeys = domainKeys[domain] ?? 0
        let newKeys = oldKeys + keyDelta
        let appears = oldKeys == 0 && newKeys > 0
        let vanishes = oldKeys > 0 && newKeys == 0
        if appears { delta += ServiceLimits.domainOverhead }
        if vanishes { delta -= ServiceLimits.domainOverhead }
        if keyDelta > 0 { try checkKeyCount(newKeys, domain: domain) }
        try checkApplicationShare(adding: delta, appears: appears)
        if appears && persistentDomainCount >= limits.domainCount {
            throw .quotaExceeded("the store holds \(persistentDomainCount) domains, the most allowed (prefsd --max-domains); remove unused domains first")
        }
        let newDomainBytes = (domainBytes[domain] ?? 0) + delta
        if delta > 0 && newDomainBytes > limits.domainBytes {
            throw .quotaExceeded(
                "the domain \(domain) would take \(newDomainBytes) bytes, over its limit of \(limits.domainBytes) (prefsd --max-domain-size; each key counts its domain's name, its name, its value and \(ServiceLimits.entryOverhead) bytes of overhead); remove keys from it first"
            )
        }
        if delta > 0 && storeBytes + delta > limits.storeBytes {
            throw .quotaExceeded(
                "the store would take \(storeBytes + delta) bytes, over its limit of \(limits.storeBytes) (prefsd --max-store-size; each key counts its domain's name, its name, its value and \(ServiceLimits.entryOverhead) bytes of overhead); remove unused domains first"
            )
        }

        lastSequence += 1
        let sequence = lastSequence
        var mutations: [StoreMutation] = wholeDomain ? [.removeDomain(domain)] : leftOutRemovals.map { .remove(domain, key: $0) }
        if !leftOutRemovals.isEmpty {
            leftOut[domain]?.removeAll { stored in leftOutRemovals.contains { $0.utf8.elementsEqual(stored.utf8) } }
            if leftOut[domain]?.isEmpty == true { leftOut[domain] = nil }
        }
        for key in removing {
            staged[domain, default: [:]][key] = (nil, sequence)
            if !wholeDomain { mutations.append(.remove(domain, key: key)) }
        }
        for (key, value) in setting.sorted(by: { $0.key < $1.key }) {
            staged[domain, default: [:]][key] = (value, sequence)
            mutations.append(.set(domain, key: key, value: value))
            if let type = types[key] { mutations.append(.setGVariantType(domain, key: key, type: type)) }
        }
        domainBytes[domain] = newDomainBytes
        domainKeys[domain] = newKeys
        persistentDomainCount += appears ? 1 : vanishes ? -1 : 0
        storeBytes += delta
        account(domain, bytes: delta, domains: appears ? 1 : vanishes ? -1 : 0, volatile: false)
        batchesInFlight += 1
        return .persistent(Batch(sequence: sequence, domain: domain, mutations: mutations))
    }

    /// Whether the store holds a row for `key` of `domain` that was left out at load (in
    /// any spelling whose composed form is `key`).
    func isLeftOut(domain: DomainName, key: String) -> Bool {
        !leftOutKeys(domain, touchedBy: [key], wholeDomain: false).isEmpty
    }

    /// The keys of `domain` left out at load that a change setting or removing `keys` (or
    /// the whole domain) removes from the store: each whose composed spelling is one of
    /// `keys`, byte for byte.
    func leftOutKeys(_ domain: DomainName, touchedBy keys: [String], wholeDomain: Bool) -> [String] {
        guard let stored = leftOut[domain] else { return [] }
        if wholeDomain { return stored }
        return stored.filter { storedKey in
            let composed = PreferenceKey.normalized(storedKey)
            return keys.contains { $0.utf8.elementsEqual(composed.utf8) }
        }
    }

    /// Refuses a change that would set or remove a key an administrator forces.
    func refuseForced(_ domain: DomainName, set: [String: PropertyListValue], remove: [String]) throws(PreferencesServiceError) {
        if let key = set.keys.sorted().first(where: { isForced(domain: domain, key: $0) })
            ?? remove.first(where: { isForced(domain: domain, key: $0) })
        {
            if forced[domain]?[key] == nil {
                throw .forced("\(domain) \"\(key)\" is locked by the administrator (a locks/ file of a dconf system database) and cannot be changed")
            }
            throw .forced("\(domain) \"\(key)\" is forced by the administrator's managed preferences and cannot be changed")
        }
    }

    private func checkVolatileQuota(adding bytes: Int) throws(PreferencesServiceError) {
        if volatileBytes + bytes > limits.volatileBytes {
            throw .quotaExceeded(
                "volatile domains would take \(volatileBytes + bytes) bytes, over their limit of \(limits.volatileBytes) (prefsd --max-volatile-size; each domain counts \(ServiceLimits.domainOverhead) bytes and each key its domain's name, its name, its value and \(ServiceLimits.entryOverhead) bytes); remove a volatile domain first"
            )
        }
    }

    private func checkKeyCount(_ count: Int, domain: DomainName) throws(PreferencesServiceError) {
        if count > limits.keysPerDomain {
            throw .quotaExceeded(
                "the domain \(domain) would hold \(count) keys, over the limit of \(limits.keysPerDomain) (prefsd --max-keys-per-domain); remove keys from it first"
            )
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
