import PreferencesModel

/// What roams, as the user chose it in the domain `io.github.prefsd.Roaming`:
///
/// | key | type | meaning |
/// | --- | --- | --- |
/// | `Domains` | array of strings | the domains that roam |
/// | `ExcludedKeys` | dictionary: domain → array of strings | key patterns of that domain that stay on this machine (`*` any run of characters, `?` one character) |
/// | `MachineName` | string | this machine's name in the folder and the history (default: the host name) |
///
/// An administrator can force any of them. The domain itself never roams, nor does any
/// `io.github.prefsd` domain.
public struct RoamingSelection: Sendable, Equatable {
    /// The domain that holds the choice.
    public static let domain: DomainName = {
        do { return try DomainName("io.github.prefsd.Roaming") } catch { preconditionFailure("\(error)") }
    }()
    /// The key listing the domains that roam.
    public static let domainsKey = "Domains"
    /// The key holding the excluded key patterns, per domain.
    public static let excludedKeysKey = "ExcludedKeys"
    /// The key holding this machine's name.
    public static let machineNameKey = "MachineName"

    /// The domains that roam.
    public var domains: Set<DomainName>
    /// Key patterns left out, per domain.
    public var excluded: [DomainName: [String]]
    /// The machine name the user chose, if any.
    public var machineName: String?

    /// Makes a selection.
    public init(domains: Set<DomainName> = [], excluded: [DomainName: [String]] = [:], machineName: String? = nil) {
        self.domains = domains
        self.excluded = excluded
        self.machineName = machineName
    }

    /// Reads the selection from the domain's entries; entries of the wrong type, and names
    /// that are not valid domain names, are ignored (and listed in `problems`).
    public init(entries: [String: PropertyListValue]) {
        var problems: [String] = []
        self.init(entries: entries, problems: &problems)
    }

    /// Reads the selection, collecting what was ignored and why.
    public init(entries: [String: PropertyListValue], problems: inout [String]) {
        var domains: Set<DomainName> = []
        if let value = entries[Self.domainsKey] {
            if case .array(let items) = value {
                for item in items {
                    guard case .string(let text) = item, let name = try? DomainName(text) else {
                        problems.append("\(Self.domainsKey) holds \(item), not a domain name"); continue
                    }
                    if name.rawValue == "io.github.prefsd" || name.rawValue.hasPrefix("io.github.prefsd.") {
                        problems.append("\(name) is prefsd's own and never roams"); continue
                    }
                    domains.insert(name)
                }
            } else {
                problems.append("\(Self.domainsKey) is not an array of domain names")
            }
        }
        var excluded: [DomainName: [String]] = [:]
        if let value = entries[Self.excludedKeysKey] {
            if case .dictionary(let byDomain) = value {
                for (text, patterns) in byDomain {
                    guard let name = try? DomainName(text), case .array(let items) = patterns else {
                        problems.append("\(Self.excludedKeysKey) \"\(text)\" is not a domain with an array of key patterns"); continue
                    }
                    excluded[name] = items.compactMap { item in
                        if case .string(let pattern) = item { return pattern }
                        problems.append("\(Self.excludedKeysKey) \"\(text)\" holds \(item), not a key pattern")
                        return nil
                    }
                }
            } else {
                problems.append("\(Self.excludedKeysKey) is not a dictionary of domains to key patterns")
            }
        }
        var machineName: String?
        if let value = entries[Self.machineNameKey] {
            if case .string(let text) = value, MachineName.isValid(text) {
                machineName = text
            } else {
                problems.append("\(Self.machineNameKey) is not 1–64 characters of A-Z a-z 0-9 . _ -")
            }
        }
        self.init(domains: domains, excluded: excluded, machineName: machineName)
    }

    /// Whether `key` of `domain` roams.
    public func roams(_ domain: DomainName, _ key: String) -> Bool {
        guard domains.contains(domain) else { return false }
        return !(excluded[domain] ?? []).contains { KeyPattern.matches($0, key) }
    }

    /// Whether `key` roams.
    public func roams(_ key: RoamingKey) -> Bool { roams(key.domain, key.key) }
}

/// Shell-style key patterns: `*` matches any run of characters (none too), `?` exactly
/// one; every other character matches itself.
public enum KeyPattern {
    /// Whether `pattern` matches the whole of `key`.
    public static func matches(_ pattern: String, _ key: String) -> Bool {
        let p = Array(pattern.unicodeScalars), k = Array(key.unicodeScalars)
        var (pi, ki) = (0, 0)
        var star: Int?
        var resume = 0
        while ki < k.count {
            if pi < p.count, p[pi] == "?" || (p[pi] != "*" && p[pi] == k[ki]) {
                pi += 1; ki += 1
            } else if pi < p.count, p[pi] == "*" {
                star = pi; resume = ki; pi += 1
            } else if let s = star {
                pi = s + 1; resume += 1; ki = resume
            } else {
                return false
            }
        }
        while pi < p.count, p[pi] == "*" { pi += 1 }
        return pi == p.count
    }
}
