import PreferencesModel

/// A batch of changes to one domain: keys to set and keys to remove.
public struct PreferencesBatch: Sendable, Hashable {
    /// The keys to set, with their values.
    public var set: [String: PropertyListValue]
    /// The keys to remove.
    public var remove: [String]

    /// A batch.
    public init(set: [String: PropertyListValue] = [:], remove: [String] = []) {
        self.set = set
        self.remove = remove
    }
}

extension PreferencesProxy {
    /// `ReadVolatileDomain`: every key of a volatile domain (`.notFound` when there is none).
    public func readVolatileDomain(_ domain: String) async throws(PreferencesProxyError) -> [String: PropertyListValue] {
        try await perform(PreferencesCall.readVolatileDomain(domain))
    }

    /// `ApplyIf`: applies the batch like `Apply` only when every key of `expected` has
    /// exactly that value and every key of `absent` is absent; returns whether it did.
    public func applyIf(
        _ domain: String, expected: [String: PropertyListValue], absent: [String] = [],
        set: [String: PropertyListValue], remove: [String] = []
    ) async throws(PreferencesProxyError) -> Bool {
        try await perform(PreferencesCall.applyIf(domain, expected: expected, absent: absent, set: set, remove: remove))
    }

    /// An atomic read-modify-write of some keys of a persistent domain: reads `keys`
    /// (`Read`; an absent key is left out of the dictionary), asks `compute` for the batch
    /// to apply, and applies it with `ApplyIf` on condition that none of `keys` changed
    /// meanwhile. When another writer got in between, it starts again, at most `attempts`
    /// times; so no concurrent write of those keys is ever overwritten unseen.
    /// - Throws: what `compute` throws; ``PreferencesProxyError/refused(_:)`` (`.forced`) when the batch
    ///   touches a key an administrator forces; ``PreferencesProxyError/contended(_:)`` when
    ///   every attempt found the keys changed; any other ``PreferencesProxyError`` of the calls.
    public func update(
        _ domain: String, keys: [String], attempts: Int = 16,
        _ compute: ([String: PropertyListValue]) throws -> PreferencesBatch
    ) async throws {
        for _ in 0..<max(attempts, 1) {
            var current: [String: PropertyListValue] = [:]
            var absent: [String] = []
            for key in keys {
                if let value = try await readIfPresent(domain, key) {
                    current[key] = value
                } else {
                    absent.append(key)
                }
            }
            let batch = try compute(current)
            if try await applyIf(domain, expected: current, absent: absent, set: batch.set, remove: batch.remove) {
                return
            }
        }
        throw PreferencesProxyError.contended(
            "\(keys.joined(separator: ", ")) in \(domain) kept changing under another writer (\(max(attempts, 1)) attempts); nothing was changed, try again")
    }
}
