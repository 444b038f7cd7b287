import PreferencesModel
import PreferencesProtocol
import PreferencesStore

/// Every domain the service knows, in memory: persistent domains as committed to disk,
/// the writes staged on their way there, volatile domains and the administrator's forced
/// keys. Pure state with no I/O: the service holds it under a lock and does the I/O.
///
/// Reads see committed data only, so a value is never read before it is durable; checks
/// that decide what a call changes (no-op writes, quotas, whether a domain exists) see the
/// projection of committed data plus every staged batch.
struct DomainState: Sendable {
    /// Persistent domains as they are on disk.
    var committed: [DomainName: [String: PropertyListValue]]
    /// Keys the store holds but left out at load, as stored (`DomainStore.leftOutKeys`):
    /// removed from the store by the next change that removes or sets their key (in its
    /// composed spelling) or removes their domain.
    var leftOut: [DomainName: [String]] = [:]
    /// Staged writes not yet durable: a value, or `nil` for a removal, with the sequence
    /// of the newest batch that staged it.
    var staged: [DomainName: [String: (value: PropertyListValue?, sequence: UInt64)]] = [:]
    /// Volatile domains, in memory only.
    var volatile: [DomainName: [String: PropertyListValue]] = [:]
    /// Keys forced by managed domains.
    var forced: [DomainName: [String: PropertyListValue]] = [:]
    /// The administrator's defaults and dconf's locks (see `AdministratorSettings.swift`).
    var administrator = AdministratorSettings()
    /// Projected bytes of each persistent domain (committed plus staged), as the quotas
    /// count them (``entryBytes(domain:key:value:)`` for each key, plus
    /// ``ServiceLimits/domainOverhead``).
    var domainBytes: [DomainName: Int] = [:]
    /// Projected number of keys of each persistent domain.
    var domainKeys: [DomainName: Int] = [:]
    /// Projected number of persistent domains that hold at least one key.
    var persistentDomainCount = 0
    /// Projected bytes of the whole persistent store.
    var storeBytes = 0
    /// Bytes of all volatile domains, counted as persistent ones are.
    var volatileBytes = 0
    /// Batches staged and not yet reported back.
    var batchesInFlight = 0
    /// The last batch number handed out.
    var lastSequence: UInt64 = 0
    /// The usage of each sandboxed application that changed something, by application ID
    /// (see `DomainState+ApplicationUsage.swift`).
    var applications: [String: ApplicationUsage] = [:]
    /// The sandboxed application whose call is being carried out, whose share is checked
    /// besides the global limits (`nil` for the host).
    var actingApplication: String?
    /// How the values of the change being carried out meet the installed schemas (see
    /// `DomainState+Schemas.swift`).
    var schemaTyping = SchemaTyping.asGiven
    /// The limits in force.
    let limits: ServiceLimits

    /// The persistent domains read one by one while the whole store loads, each as it is on
    /// disk (a name without entries: no such domain), or `nil` once every domain is loaded
    /// (see `DomainState+Loading.swift`). While it is not `nil`, `committed` holds these
    /// domains only, and nothing is staged.
    var partial: Set<DomainName>?

    /// Starts from the domains loaded from the store.
    init(committed: [DomainName: [String: PropertyListValue]], limits: ServiceLimits) {
        self.committed = committed
        self.limits = limits
        countQuotas()
    }

    /// Counts the quotas (``domainBytes``, ``domainKeys``, ``persistentDomainCount``,
    /// ``storeBytes``) of `committed`, with nothing staged.
    mutating func countQuotas() {
        domainBytes = Dictionary(minimumCapacity: committed.count)
        domainKeys = Dictionary(minimumCapacity: committed.count)
        storeBytes = 0
        persistentDomainCount = 0
        for (domain, entries) in committed where !entries.isEmpty {
            let bytes = Self.bytes(of: entries, domain: domain)
            domainBytes[domain] = bytes
            domainKeys[domain] = entries.count
            storeBytes += bytes
            persistentDomainCount += 1
        }
    }

    /// What one entry costs against the quotas: its domain's name, its key and its value
    /// (as marshalled on the bus), plus ``ServiceLimits/entryOverhead`` for the row, index
    /// and memory that hold it.
    static func entryBytes(domain: DomainName, key: String, value: PropertyListValue) -> Int {
        domain.rawValue.utf8.count + key.utf8.count + value.marshalledSize + ServiceLimits.entryOverhead
    }

    /// What a domain holding `entries` costs: each entry, plus ``ServiceLimits/domainOverhead``.
    static func bytes(of entries: [String: PropertyListValue], domain: DomainName) -> Int {
        entries.reduce(ServiceLimits.domainOverhead) { $0 + entryBytes(domain: domain, key: $1.key, value: $1.value) }
    }

    // MARK: Reading

    /// The value a reader sees for `key` in a persistent domain: forced (by a managed
    /// domain, else by a dconf lock), else the user's committed value, else the
    /// administrator's default. Volatile domains are another namespace and never consulted.
    func value(domain: DomainName, key: String) -> PropertyListValue? {
        if let value = forced[domain]?[key] { return value }
        if administrator.isEmpty { return committed[domain]?[key] }
        if let lock = administrator.locks[domain]?[key] { return lock.value }
        return committed[domain]?[key] ?? administrator.defaults[domain]?[key]
    }

    /// Every key of a persistent domain as a reader sees it (the user's values laid over
    /// the administrator's defaults, locked and forced keys over both), or `nil` when
    /// there is no such domain and an administrator sets nothing in it.
    func entries(domain: DomainName) -> [String: PropertyListValue]? {
        let base = committed[domain]
        let defaults = administrator.defaults[domain], locks = administrator.locks[domain], managed = forced[domain]
        if defaults == nil && locks == nil && (managed?.isEmpty ?? true) { return base }
        var merged = defaults ?? [:]
        if let base { merged.merge(base) { _, user in user } }
        for (key, lock) in locks ?? [:] { merged[key] = lock.value }
        if let managed { merged.merge(managed) { _, forcedValue in forcedValue } }
        return base == nil && merged.isEmpty ? nil : merged
    }

    /// Every key of a volatile domain, or `nil` when there is no such volatile domain.
    func volatileEntries(domain: DomainName) -> [String: PropertyListValue]? {
        volatile[domain]
    }

    /// Names of the persistent domains on disk, unsorted: copied out under the lock, and
    /// sorted by the caller outside it.
    var persistentDomainNamesUnsorted: [DomainName] { Array(committed.keys) }

    /// Names of the volatile domains, unsorted (sorted by the caller outside the lock).
    var volatileDomainNamesUnsorted: [DomainName] { Array(volatile.keys) }

    /// The keys an administrator forces in `domain` (managed or locked in dconf), sorted.
    func forcedKeys(domain: DomainName) -> [String] {
        guard let locks = administrator.locks[domain] else { return (forced[domain] ?? [:]).keys.sorted() }
        return Set((forced[domain] ?? [:]).keys).union(locks.keys).sorted()
    }

    /// Whether an administrator forces `key` in `domain` (managed or locked in dconf).
    func isForced(domain: DomainName, key: String) -> Bool {
        forced[domain]?[key] != nil || administrator.locks[domain]?[key] != nil
    }

    /// The first persistent domain of `searchList` that has `key`, with its value.
    func lookup(searchList: [DomainName], key: String) -> (DomainName, PropertyListValue)? {
        for domain in searchList {
            if let value = value(domain: domain, key: key) { return (domain, value) }
        }
        return nil
    }

    // MARK: Projection

    /// The value of a persistent key once every staged batch is durable.
    func projected(domain: DomainName, key: String) -> PropertyListValue? {
        if let entry = staged[domain]?[key] { return entry.value }
        return committed[domain]?[key]
    }

    /// Every persistent key of a domain once every staged batch is durable.
    func projectedEntries(domain: DomainName) -> [String: PropertyListValue] {
        var entries = committed[domain] ?? [:]
        for (key, entry) in staged[domain] ?? [:] {
            entries[key] = entry.value
        }
        return entries
    }

    /// Whether a persistent domain will exist once every staged batch is durable.
    func persistentDomainExists(_ domain: DomainName) -> Bool {
        if staged[domain] == nil { return committed[domain] != nil }
        return !projectedEntries(domain: domain).isEmpty
    }
}
