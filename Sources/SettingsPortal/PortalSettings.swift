import DBus
import PreferencesModel
import PreferencesProtocol

/// One `SettingChanged` to emit.
public struct SettingChange: Sendable, Hashable {
    /// The namespace.
    public var namespace: String
    /// The key.
    public var key: String
    /// Its new value.
    public var value: DBusValue

    /// A change.
    public init(namespace: String, key: String, value: DBusValue) {
        self.namespace = namespace
        self.key = key
        self.value = value
    }
}

/// What the backend serves, namespace by namespace, made from prefsd domains: pure state
/// with no I/O.
///
/// `org.freedesktop.appearance` is read from the prefsd domain of that name and converted
/// to the types the portal documents (``Appearance``); every exposed domain is served
/// under its own name with the values as prefsd sends them (`s`, `x`, `d`, `b`, `ay`,
/// `(d)`, `av`, `a{sv}`).
public struct PortalSettings: Sendable, Equatable {
    /// The prefsd domain whose `ExposedDomains` key lists the domains served besides the
    /// appearance namespace (an array of domain names; none when absent).
    public static let configurationDomain = "io.github.prefsd.Portal"
    /// The key of ``configurationDomain`` that lists the exposed domains.
    public static let exposedDomainsKey = "ExposedDomains"

    /// The namespaces served, each with its keys and portal values.
    public private(set) var namespaces: [String: [String: DBusValue]] = [:]

    /// An empty set of settings.
    public init() {}

    /// The domains an `ExposedDomains` value names: valid domain names only, the appearance
    /// and configuration domains left out (the first is served anyway, the second never).
    public static func exposedDomains(from value: PropertyListValue?) -> Set<String> {
        guard case .array(let items)? = value else { return [] }
        var names = Set<String>()
        for case .string(let name) in items where DomainName.problem(with: name) == nil {
            names.insert(name)
        }
        names.remove(Appearance.namespace)
        names.remove(configurationDomain)
        return names
    }

    /// Puts a domain's current contents in force (`nil`: the domain is not served, or
    /// has no keys) and returns the `SettingChanged` signals its readers should see.
    ///
    /// A key that went away cannot be announced by the portal's signal, except in the
    /// appearance namespace, where it falls back to 0, "no preference".
    public mutating func update(namespace: String, entries: [String: PropertyListValue]?) -> [SettingChange] {
        let before = namespaces[namespace] ?? [:]
        var after: [String: DBusValue] = [:]
        for (key, value) in entries ?? [:] {
            if namespace == Appearance.namespace {
                if let converted = Appearance.portalValue(key: key, value) { after[key] = converted }
            } else {
                after[key] = value.dbusValue
            }
        }
        namespaces[namespace] = after.isEmpty ? nil : after

        var changes: [SettingChange] = []
        for (key, value) in after.sorted(by: { $0.key < $1.key }) where before[key] != value {
            changes.append(SettingChange(namespace: namespace, key: key, value: value))
        }
        if namespace == Appearance.namespace {
            for key in before.keys.sorted() where after[key] == nil {
                if let fallback = Appearance.noPreference(key) {
                    changes.append(SettingChange(namespace: namespace, key: key, value: fallback))
                }
            }
        }
        return changes
    }

    /// `ReadAll`: every namespace any pattern matches (every one for an empty list).
    public func readAll(_ patterns: [NamespacePattern]) -> [String: [String: DBusValue]] {
        namespaces.filter { NamespacePattern.any(patterns, match: $0.key) }
    }

    /// `Read`: one value, or `nil` for an unknown namespace or key.
    public func read(namespace: String, key: String) -> DBusValue? {
        namespaces[namespace]?[key]
    }
}
