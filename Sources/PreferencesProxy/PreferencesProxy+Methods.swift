import PreferencesModel
import PreferencesProtocol

/// One async member per method and property of the interface; each sends the request of
/// ``PreferencesCall`` of the same name (whose blocking form is
/// ``PreferencesProxy/performBlocking(_:timeout:)``).
extension PreferencesProxy {
    /// `Read`: the value of `key` in the persistent `domain` (`.notFound` when absent).
    public func read(_ domain: String, _ key: String) async throws(PreferencesProxyError) -> PropertyListValue {
        try await perform(PreferencesCall.read(domain, key))
    }

    /// `Read`, with `nil` for a key or domain that does not exist.
    public func readIfPresent(_ domain: String, _ key: String) async throws(PreferencesProxyError) -> PropertyListValue? {
        do {
            return try await read(domain, key)
        } catch .refused(.notFound) {
            return nil
        }
    }

    /// `Write`: sets `key` in `domain`; returns once the write is durable.
    public func write(_ domain: String, _ key: String, _ value: PropertyListValue) async throws(PreferencesProxyError) {
        try await perform(PreferencesCall.write(domain, key, value))
    }

    /// `Remove`: removes `key` from `domain` (an absent key is no error).
    public func remove(_ domain: String, _ key: String) async throws(PreferencesProxyError) {
        try await perform(PreferencesCall.remove(domain, key))
    }

    /// `Domains`: the persistent domains, sorted.
    public func domains() async throws(PreferencesProxyError) -> [String] {
        try await perform(PreferencesCall.domains())
    }

    /// `ReadDomain`: every key of a persistent domain (`.notFound` when there is none).
    public func readDomain(_ domain: String) async throws(PreferencesProxyError) -> [String: PropertyListValue] {
        try await perform(PreferencesCall.readDomain(domain))
    }

    /// `Apply`: sets `set` and removes `remove` in one atomic commit.
    public func apply(_ domain: String, set: [String: PropertyListValue], remove: [String] = []) async throws(PreferencesProxyError) {
        try await perform(PreferencesCall.apply(domain, set: set, remove: remove))
    }

    /// `ReplaceDomain`: the persistent domain holds exactly `values` afterwards.
    public func replaceDomain(_ domain: String, _ values: [String: PropertyListValue]) async throws(PreferencesProxyError) {
        try await perform(PreferencesCall.replaceDomain(domain, values))
    }

    /// `RemoveDomain`: removes a persistent domain (absent: no error).
    public func removeDomain(_ domain: String) async throws(PreferencesProxyError) {
        try await perform(PreferencesCall.removeDomain(domain))
    }

    /// `VolatileDomains`: the volatile domains, sorted.
    public func volatileDomains() async throws(PreferencesProxyError) -> [String] {
        try await perform(PreferencesCall.volatileDomains())
    }

    /// `SetVolatileDomain`: creates a volatile domain holding `values`.
    public func setVolatileDomain(_ domain: String, _ values: [String: PropertyListValue]) async throws(PreferencesProxyError) {
        try await perform(PreferencesCall.setVolatileDomain(domain, values))
    }

    /// `RemoveVolatileDomain`: drops a volatile domain (absent: no error).
    public func removeVolatileDomain(_ domain: String) async throws(PreferencesProxyError) {
        try await perform(PreferencesCall.removeVolatileDomain(domain))
    }

    /// `IsForced`: whether an administrator forces `key` in `domain`.
    public func isForced(_ domain: String, _ key: String) async throws(PreferencesProxyError) -> Bool {
        try await perform(PreferencesCall.isForced(domain, key))
    }

    /// `ForcedKeys`: the keys an administrator forces in `domain`.
    public func forcedKeys(_ domain: String) async throws(PreferencesProxyError) -> [String] {
        try await perform(PreferencesCall.forcedKeys(domain))
    }

    /// `Lookup`: the first persistent domain of `searchList` that has `key`, and its value
    /// (`.notFound` when none has it).
    public func lookup(_ searchList: [String], _ key: String) async throws(PreferencesProxyError) -> PreferencesLookup {
        try await perform(PreferencesCall.lookup(searchList, key))
    }

    /// `History`: the journal's entries of `domain` (of `key`, unless `""`) after `after`,
    /// oldest first, at most `limit` (0: as many as one reply carries).
    public func history(_ domain: String, key: String = "", after: UInt64 = 0, limit: UInt32 = 0) async throws(PreferencesProxyError) -> [HistoryEntry] {
        try await perform(PreferencesCall.history(domain, key: key, after: after, limit: limit))
    }

    /// `RecentHistory` (beyond the contract): the newest `limit` entries of `domain` (of
    /// `key` unless `""`; every domain for `""`), oldest first.
    public func recentHistory(_ domain: String, key: String = "", limit: UInt32) async throws(PreferencesProxyError) -> [HistoryEntry] {
        try await perform(PreferencesCall.recentHistory(domain, key: key, limit: limit))
    }

    /// `RevertTo`: puts `domain` back as it was right after change `sequence` (0: before
    /// every recorded change); `.notFound` when the history no longer reaches back so far.
    public func revertTo(_ domain: String, sequence: UInt64) async throws(PreferencesProxyError) {
        try await perform(PreferencesCall.revertTo(domain, sequence: sequence))
    }

    /// `RevertKeyTo`: puts one key of `domain` back as it was right after change `sequence`.
    public func revertKeyTo(_ domain: String, key: String, sequence: UInt64) async throws(PreferencesProxyError) {
        try await perform(PreferencesCall.revertKeyTo(domain, key: key, sequence: sequence))
    }

    /// The `Version` property: the version of the interface the service implements.
    public func version() async throws(PreferencesProxyError) -> String {
        try await perform(PreferencesCall.version())
    }
}
