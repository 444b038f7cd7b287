import ClientDriver
import PreferencesClient
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

extension BusSession {
    /// Makes sure the persistent domains are in the engine's cache (see the other form).
    @discardableResult
    func ensureLoaded(_ domains: [DomainName]) -> Bool {
        ensureLoaded(domains.map { ClientDomain($0.rawValue) })
    }

    /// Makes sure the domains are in the engine's cache: those not loaded yet are followed
    /// and loaded together, every call of every domain sent before any answer is awaited
    /// (one round trip for all of them), and waits for domains another thread is loading.
    /// A domain whose load failed is not tried again for a second, so that reads without
    /// prefsd stay fast; when prefsd cannot be reached the domains stay unloaded and reads
    /// fall back on the local domains.
    /// - Returns: whether every domain is loaded.
    @discardableResult
    func ensureLoaded(_ domains: [ClientDomain]) -> Bool {
        guard let driver = try? driver() else { return false }
        var wanted: [ClientDomain] = []
        var allLoaded = true
        let now = ContinuousClock.now
        for domain in domains {
            switch driver.phase(of: domain) {
            case .loaded:
                continue
            case .unavailable:
                allLoaded = false
                let retry = retryAfter.withLock { $0[domain] }
                if let retry, now < retry { continue }
                // Followed again from the start: its subscription failed with its load.
                driver.forget(domain)
                wanted.append(domain)
            case .loading, .unknown:
                allLoaded = false
                wanted.append(domain)
            }
        }
        guard !allLoaded else { return true }
        guard !wanted.isEmpty else { return false }
        let loaded = driver.loadBlocking(wanted, timeout: Self.callTimeout)
        let failed = wanted.filter { driver.phase(of: $0) != .loaded }
        retryAfter.withLock { retryAfter in
            for domain in wanted { retryAfter[domain] = nil }
            for domain in failed { retryAfter[domain] = now + .seconds(1) }
        }
        return loaded && domains.allSatisfy { driver.phase(of: $0) == .loaded }
    }

    /// One round trip to prefsd (the proxy's catch-up): when this returns, every change
    /// prefsd sent before it is in the cache, values a signal left out (read again by
    /// loading their domain) included.
    /// - Returns: false when prefsd could not be reached.
    func catchUp() -> Bool {
        guard let driver = currentDriver ?? (try? driver()), driver.proxy.catchUpBlocking() else { return false }
        let settled = driver.waitForLoads(timeout: Self.callTimeout)
        generation.add(1, ordering: .releasing)
        return settled
    }

    /// Sends one of the proxy's requests, blocking the calling thread; returns its reply read.
    func callBlocking<Reply>(_ request: PreferencesRequest<Reply>) throws(PreferencesError) -> Reply {
        let proxy = try driver().proxy
        return try proxy.answerBlocking(request, timeout: Self.callTimeout).value
    }

    // MARK: Whole domains

    /// A domain's contents as this process sees them (its pending changes over prefsd's
    /// values), or `nil` when it has no key or cannot be loaded.
    func entries(of domain: ClientDomain) -> [String: PropertyListValue]? {
        guard ensureLoaded([domain]), let entries = currentDriver?.entries(of: domain), !entries.isEmpty else { return nil }
        return entries
    }

    /// The names of the persistent (or volatile) domains, sorted, with this process's
    /// pending changes.
    func domainNames(volatile: Bool) -> [String] {
        let request = volatile ? PreferencesCall.volatileDomains() : PreferencesCall.domains()
        var names = Set((try? callBlocking(request)) ?? [])
        guard let driver = currentDriver else { return names.sorted() }
        for domain in driver.followedDomains where domain.isVolatile == volatile && driver.phase(of: domain) == .loaded {
            if driver.entries(of: domain).isEmpty { names.remove(domain.name) } else { names.insert(domain.name) }
        }
        return names.sorted()
    }
}
