import PreferencesModel

/// What the domains a sandboxed application may write hold: its own domain (its ID) and
/// its suites (`ID.*`), persistent (projected) and volatile, counted as the global quotas
/// count them.
struct ApplicationUsage: Sendable, Hashable {
    var bytes = 0
    var domains = 0
    var volatileBytes = 0
    var volatileDomains = 0
}

/// Each sandboxed application's share of the limits (``ServiceLimits/applicationStoreBytes``
/// and the others): the usage of every application seen so far is kept up to date with
/// each change, from the moment it first changes something.
extension DomainState {
    /// Whether `domain` is `application`'s own domain or one of its suites.
    static func domain(_ domain: DomainName, belongsTo application: String) -> Bool {
        let name = domain.rawValue
        return name == application || (name.hasPrefix(application) && name.utf8.dropFirst(application.utf8.count).first == UInt8(ascii: "."))
    }

    /// Starts keeping `application`'s usage, counting what its domains hold now (once per
    /// application: a walk over every domain).
    mutating func followApplication(_ application: String) {
        guard applications[application] == nil else { return }
        var usage = ApplicationUsage()
        for (domain, keys) in domainKeys where keys > 0 && Self.domain(domain, belongsTo: application) {
            usage.bytes += domainBytes[domain] ?? 0
            usage.domains += 1
        }
        for (domain, entries) in volatile where Self.domain(domain, belongsTo: application) {
            usage.volatileBytes += Self.bytes(of: entries, domain: domain)
            usage.volatileDomains += 1
        }
        applications[application] = usage
    }

    /// Adds a change of `domain` to the usage of every followed application it belongs to
    /// (its name and each of its prefixes ending before a dot).
    mutating func account(_ domain: DomainName, bytes: Int, domains: Int, volatile: Bool) {
        guard !applications.isEmpty, bytes != 0 || domains != 0 else { return }
        let name = domain.rawValue
        var candidates = [name]
        var index = name.startIndex
        while let dot = name[index...].firstIndex(of: ".") {
            candidates.append(String(name[..<dot]))
            index = name.index(after: dot)
        }
        for candidate in candidates where applications[candidate] != nil {
            if volatile {
                applications[candidate]?.volatileBytes += bytes
                applications[candidate]?.volatileDomains += domains
            } else {
                applications[candidate]?.bytes += bytes
                applications[candidate]?.domains += domains
            }
        }
    }

    /// Refuses a persistent change by the acting application (``actingApplication``) that
    /// would take its domains past its share.
    func checkApplicationShare(adding bytes: Int, appears: Bool) throws(PreferencesServiceError) {
        guard let application = actingApplication, let usage = applications[application] else { return }
        if appears && usage.domains >= limits.applicationDomainCount {
            throw .quotaExceeded(
                "the sandboxed application \(application) holds \(usage.domains) domains (its own and its suites \(application).*), the most one application may (prefsd --max-app-domains); remove some first"
            )
        }
        if bytes > 0 && usage.bytes + bytes > limits.applicationStoreBytes {
            throw .quotaExceeded(
                "the domains of the sandboxed application \(application) would take \(usage.bytes + bytes) bytes, over its share of \(limits.applicationStoreBytes) (prefsd --max-app-store-size; counted as for --max-store-size); remove keys first"
            )
        }
    }

    /// Refuses a volatile domain of `bytes` by the acting application that would take it
    /// past its share.
    func checkApplicationVolatileShare(adding bytes: Int) throws(PreferencesServiceError) {
        guard let application = actingApplication, let usage = applications[application] else { return }
        if usage.volatileDomains >= limits.applicationVolatileDomainCount {
            throw .quotaExceeded(
                "the sandboxed application \(application) holds \(usage.volatileDomains) volatile domains, the most one application may (prefsd --max-app-volatile-domains); remove one first"
            )
        }
        if usage.volatileBytes + bytes > limits.applicationVolatileBytes {
            throw .quotaExceeded(
                "the volatile domains of the sandboxed application \(application) would take \(usage.volatileBytes + bytes) bytes, over its share of \(limits.applicationVolatileBytes) (prefsd --max-app-volatile-size); remove a volatile domain first"
            )
        }
    }
}
