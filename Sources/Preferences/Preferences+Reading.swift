import Foundation
import PreferencesClient
import PreferencesModel

extension Preferences {
    /// The effective value of `key` through the search list, or `nil`.
    ///
    /// A repeated read costs one lock and one lookup in a table: values are kept once
    /// resolved until the cache or the search list changes.
    public func value(forKey key: String) -> PropertyListValue? {
        let generation = session.generation.load(ordering: .acquiring)
        let hit = local.withLock { local -> PropertyListValue?? in
            local.resolvedGeneration == generation ? local.resolved[key] : nil
        }
        if let hit { return hit }
        return resolve(key)
    }

    private func resolve(_ key: String) -> PropertyListValue? {
        let (layers, version) = local.withLock { ($0.layers, $0.layersVersion) }
        let loaded = session.ensureLoaded(layers.clientDomains)
        // Read before the value: a change made meanwhile bumps it, and the value is not kept.
        let generation = session.generation.load(ordering: .acquiring)
        let value = layers.resolve(key, in: session.currentDriver)
        // Keep it only when every domain could be loaded: otherwise the value is a
        // fallback, and the next read tries the service again.
        guard loaded else { return value }
        local.withLock { local in
            guard local.layersVersion == version else { return }
            if local.resolvedGeneration != generation {
                local.resolved.removeAll()
                local.resolvedGeneration = generation
            }
            local.resolved.set(value, forKey: key)
        }
        return value
    }

    /// The effective value of `key` as Foundation objects (`String`, `NSNumber`, `Bool`,
    /// `Data`, `Date`, arrays and dictionaries), as `UserDefaults.object(forKey:)`.
    public func object(forKey key: String) -> Any? {
        value(forKey: key)?.foundationObject
    }

    /// The value as a string; numbers and booleans are converted (see `Coercion`).
    public func string(forKey key: String) -> String? {
        value(forKey: key).flatMap(Coercion.string)
    }

    /// The value as an integer; 0 when absent or not convertible (see `Coercion`).
    public func integer(forKey key: String) -> Int {
        value(forKey: key).flatMap(Coercion.integer) ?? 0
    }

    /// The value as a double; 0 when absent or not convertible (see `Coercion`).
    public func double(forKey key: String) -> Double {
        value(forKey: key).flatMap(Coercion.double) ?? 0
    }

    /// The value as a float; 0 when absent or not convertible (see `Coercion`).
    public func float(forKey key: String) -> Float {
        Float(double(forKey: key))
    }

    /// The value as a boolean; false when absent or not convertible (see `Coercion`).
    public func bool(forKey key: String) -> Bool {
        value(forKey: key).flatMap(Coercion.bool) ?? false
    }

    /// The value when it is an array, as Foundation objects.
    public func array(forKey key: String) -> [Any]? {
        guard case .array(let items)? = value(forKey: key) else { return nil }
        return items.map(\.foundationObject)
    }

    /// The value when it is an array of strings only.
    public func stringArray(forKey key: String) -> [String]? {
        value(forKey: key).flatMap(Coercion.stringArray)
    }

    /// The value when it is a dictionary, as Foundation objects.
    public func dictionary(forKey key: String) -> [String: Any]? {
        guard case .dictionary(let entries)? = value(forKey: key) else { return nil }
        return entries.mapValues(\.foundationObject)
    }

    /// The value when it is data.
    public func data(forKey key: String) -> Data? {
        guard case .data(let bytes)? = value(forKey: key) else { return nil }
        return bytes
    }

    /// The value as a URL: a string with a scheme is that URL, any other string a file
    /// path with `~` expanded.
    public func url(forKey key: String) -> URL? {
        value(forKey: key).flatMap(Coercion.url)
    }

    /// Every key of every domain in the search list with its effective value: for each
    /// key, what `object(forKey:)` returns.
    public func dictionaryRepresentation() -> [String: Any] {
        let layers = local.withLock { $0.layers }
        session.ensureLoaded(layers.clientDomains)
        let driver = session.currentDriver
        var values: [String: PropertyListValue] = [:]
        for key in layers.allKeys(in: driver) {
            if let value = layers.resolve(key, in: driver) { values[key] = value }
        }
        return values.mapValues(\.foundationObject)
    }

    /// Whether an administrator forces `key` in this object's domain.
    public func objectIsForced(forKey key: String) -> Bool {
        objectIsForced(forKey: key, inDomain: domainName)
    }

    /// Whether an administrator forces `key` in `domain`.
    public func objectIsForced(forKey key: String, inDomain domain: String) -> Bool {
        guard let name = try? DomainName(domain) else { return false }
        let domain = ClientDomain(name.rawValue)
        session.ensureLoaded([domain])
        return session.currentDriver?.isForced(key, in: domain) ?? false
    }
}
