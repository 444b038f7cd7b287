import PreferencesModel

/// The client's copy of the service's domains: each loaded domain's values and forced
/// keys, kept true by the service's signals, with this process's writes laid over them
/// until the service has answered.
struct DomainCache: Sendable {
    /// A domain as the service last described it.
    struct Domain: Sendable {
        var values: [String: PropertyListValue] = [:]
        var forced: Set<String> = []
    }

    /// A write sent and not answered yet: the value (`nil` for a removal) and the number of
    /// the newest local write of the key.
    struct LocalWrite: Sendable {
        var value: PropertyListValue?
        var generation: UInt64
    }

    /// A whole-domain change (ReplaceDomain, RemoveDomain) sent and not answered yet: the
    /// domain's new contents (empty for a removal), with the key writes made after it.
    struct LocalReplace: Sendable {
        var values: [String: PropertyListValue]
        var generation: UInt64
    }

    /// Domains loaded from the service.
    private(set) var domains: [DomainName: Domain] = [:]
    /// Local writes waiting for their answer.
    private(set) var local: [DomainName: [String: LocalWrite]] = [:]
    /// Local whole-domain changes waiting for their answer.
    private(set) var replaced: [DomainName: LocalReplace] = [:]
    private var lastGeneration: UInt64 = 0

    /// Whether a domain is loaded.
    func isLoaded(_ domain: DomainName) -> Bool { domains[domain] != nil }

    /// The value this process sees for a key of a domain: its own pending changes over
    /// what the service last described.
    func value(_ domain: DomainName, _ key: String) -> PropertyListValue? {
        if let write = local[domain]?[key] { return write.value }
        if let replace = replaced[domain] { return replace.values[key] }
        return domains[domain]?.values[key]
    }

    /// Whether an administrator forces the key.
    func isForced(_ domain: DomainName, _ key: String) -> Bool {
        domains[domain]?.forced.contains(key) == true
    }

    /// Every key of a domain as this process sees it.
    func entries(_ domain: DomainName) -> [String: PropertyListValue] {
        var entries = replaced[domain]?.values ?? domains[domain]?.values ?? [:]
        for (key, write) in local[domain] ?? [:] { entries[key] = write.value }
        return entries
    }

    /// Whether this process has changes of the domain the service has not answered yet.
    func hasLocalChanges(_ domain: DomainName) -> Bool {
        local[domain] != nil || replaced[domain] != nil
    }

    /// The domains with local changes not answered yet.
    var changedDomains: Set<DomainName> { Set(local.keys).union(replaced.keys) }

    /// Keys of a domain that have a value or a pending local change.
    func keys(_ domain: DomainName) -> Set<String> {
        Set((domains[domain]?.values ?? [:]).keys)
            .union((local[domain] ?? [:]).keys)
            .union((replaced[domain]?.values ?? [:]).keys)
    }

    /// Records a domain as loaded with what the service answered.
    mutating func load(_ domain: DomainName, values: [String: PropertyListValue], forced: Set<String>) {
        domains[domain] = Domain(values: values, forced: forced)
    }

    /// Forgets a domain (no longer searched).
    mutating func unload(_ domain: DomainName) {
        domains[domain] = nil
    }

    /// Applies a `Changed` signal to a loaded domain.
    mutating func applyChange(_ domain: DomainName, changed: [String: PropertyListValue], removed: [String]) {
        guard domains[domain] != nil else { return }
        for (key, value) in changed { domains[domain]?.values[key] = value }
        for key in removed { domains[domain]?.values[key] = nil }
    }

    /// Replaces the forced keys of a loaded domain.
    mutating func setForced(_ domain: DomainName, _ keys: Set<String>) {
        guard domains[domain] != nil else { return }
        domains[domain]?.forced = keys
    }

    /// Lays a local write over the domain; returns its generation.
    mutating func beginWrite(_ domain: DomainName, _ key: String, _ value: PropertyListValue?) -> UInt64 {
        lastGeneration += 1
        local[domain, default: [:]][key] = LocalWrite(value: value, generation: lastGeneration)
        // A write made after a pending whole-domain change also outlives its answer.
        if replaced[domain] != nil { replaced[domain]?.values[key] = value }
        return lastGeneration
    }

    /// Drops a local write once answered, unless a newer local write of the key replaced it.
    /// After a success the service's signal has already brought the value into the domain.
    mutating func endWrite(_ domain: DomainName, _ key: String, generation: UInt64) {
        guard local[domain]?[key]?.generation == generation else { return }
        local[domain]?[key] = nil
        if local[domain]?.isEmpty == true { local[domain] = nil }
    }

    /// Lays a whole-domain change over the domain (the earlier local writes of the domain
    /// are replaced by it); returns its generation.
    mutating func beginReplace(_ domain: DomainName, _ values: [String: PropertyListValue]) -> UInt64 {
        lastGeneration += 1
        replaced[domain] = LocalReplace(values: values, generation: lastGeneration)
        local[domain] = nil
        return lastGeneration
    }

    /// Drops a whole-domain change once answered, unless a newer one replaced it.
    mutating func endReplace(_ domain: DomainName, generation: UInt64) {
        guard replaced[domain]?.generation == generation else { return }
        replaced[domain] = nil
    }
}

/// What one preferences object searches besides the service's domains.
struct Layers: Sendable {
    var searchList: SearchList {
        didSet { serviceDomains = searchList.serviceDomains }
    }
    var argument: [String: PropertyListValue]
    var language: [String: PropertyListValue]
    var registration: [String: PropertyListValue] = [:]
    /// `searchList.serviceDomains`, kept: every resolution walks it.
    private(set) var serviceDomains: [DomainName]

    init(searchList: SearchList, argument: [String: PropertyListValue], language: [String: PropertyListValue]) {
        self.searchList = searchList
        self.argument = argument
        self.language = language
        serviceDomains = searchList.serviceDomains
    }

    /// The effective value of a key: forced keys, the argument domain, the service's
    /// domains in search order, the language domain, the registration domain.
    func resolve(_ key: String, in cache: DomainCache) -> PropertyListValue? {
        let domains = serviceDomains
        for domain in domains where cache.isForced(domain, key) {
            if let value = cache.value(domain, key) { return value }
        }
        if let value = argument[key] { return value }
        for domain in domains {
            if let value = cache.value(domain, key) { return value }
        }
        return language[key] ?? registration[key]
    }

    /// Every key any layer has.
    func allKeys(in cache: DomainCache) -> Set<String> {
        var keys = Set(argument.keys).union(language.keys).union(registration.keys)
        for domain in serviceDomains { keys.formUnion(cache.keys(domain)) }
        return keys
    }
}
