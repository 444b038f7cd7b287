import Dconf
import GSettingsPaths
import GSettingsSchemas
import PreferencesModel

/// A dconf `Change` as prefsd carries it out: each dconf key through the GSettings path rule
/// to a domain and key, each value as the GSettings module stores it, grouped per domain,
/// with the GVariant types to keep so that dconf's file gives every value back exactly.
struct DconfRequest: Sendable {
    /// What the change does to one domain.
    struct Part: Sendable {
        var domain: DomainName
        var set: [String: PropertyListValue] = [:]
        var remove: [String] = []
    }

    /// The domains' parts, in the order the changeset first names them.
    private(set) var parts: [Part] = []
    /// The types to record (`nil`: a value of its natural type, or a key reset).
    private(set) var types: [(domain: DomainName, key: String, type: String?)] = []
    /// The directories the changeset resets.
    private(set) var directories: [String] = []

    /// Whether the change only resets keys (it can only free room).
    var onlyRemoves: Bool { parts.allSatisfy(\.set.isEmpty) }

    /// The keys the change touches, per domain.
    var touched: [DomainName: [String]] {
        var touched: [DomainName: [String]] = [:]
        for part in parts { touched[part.domain, default: []] += Array(part.set.keys) + part.remove }
        return touched
    }

    /// The dconf keys the change sets and resets, with the value dconf's file holds for each
    /// once it is committed (`nil`: none), but for the domains `leftOut` says the file
    /// leaves out.
    func fileValues(leavingOut leftOut: (DomainName) -> Bool) -> [String: DconfValue?] {
        var given: [DomainName: [String: String]] = [:]
        for (domain, key, type) in types { given[domain, default: [:]][key] = type }
        var values: [String: DconfValue?] = [:]
        for part in parts where !leftOut(part.domain) {
            for (key, value) in part.set {
                guard let path = DconfMirror.path(domain: part.domain, key: key) else { continue }
                values[path] = .some(DconfValue(storedValue: value, writtenAs: given[part.domain]?[key]))
            }
            for key in part.remove {
                guard let path = DconfMirror.path(domain: part.domain, key: key) else { continue }
                values[path] = .some(nil)
            }
        }
        return values
    }

    /// Reads the serialised changeset `blob` for `caller`.
    /// - Parameter schemas: the installed schemas: a value set at a key one describes must be
    ///   of the key's own type (dconf's `Change` says the type; another is refused, not
    ///   converted) and one the key takes.
    /// - Parameter storedKeys: every persistent domain with its keys (staged ones included),
    ///   asked for only when the changeset resets a directory.
    /// - Throws: ``PreferencesServiceError`` `InvalidArgs` for a changeset dconf's engine
    ///   would not send, `InvalidName` for a key prefsd cannot store, `InvalidValue` for a
    ///   value its schema key cannot hold (naming every such key) or one past the limits,
    ///   `QuotaExceeded` for a value past the limits, `AccessDenied` for a sandboxed caller
    ///   reaching past its own domains.
    init(
        serialised blob: [UInt8], limits: ServiceLimits, schemas: SchemaIndex, caller: CallerIdentity,
        storedKeys: () -> [(DomainName, [String])]
    ) throws(PreferencesServiceError) {
        let changeset: DconfChangeset
        do { changeset = try DconfChangeset(serialised: blob) } catch { throw .invalidArguments(error.description) }
        var listed: [(DomainName, [String])]?
        // The type each key is set with (`nil`: its value's natural type).
        var given: [DomainName: [String: String?]] = [:]
        var refusals: [String] = []
        for entry in changeset.entries {
            switch entry {
            case .set(let path, let value):
                let (domain, key) = try Self.location(path, caller: caller)
                let stored = value.storedValue
                try limits.check(stored, subject: "the value of \(path)")
                if let rule = schemas.rule(domain: domain.rawValue, key: key),
                    let refusal = rule.refusal(of: stored, exactType: value.type, key: path, given: value.text)
                {
                    refusals.append(refusal.description)
                }
                let index = part(domain)
                parts[index].set[key] = stored
                given[domain, default: [:]][key] = .some(DconfValue.typeToKeep(value.type, storing: stored))
            case .reset(let path):
                // A key the path rule cannot reach is stored nowhere: nothing to reset.
                guard GSettingsPath(settingsKey: path) != nil else { continue }
                let (domain, key) = try Self.location(path, caller: caller)
                let index = part(domain)
                parts[index].remove.append(key)
            case .resetDirectory(let directory):
                directories.append(directory)
                if listed == nil { listed = storedKeys() }
                for (domain, keys) in listed ?? [] {
                    let under = keys.filter { DconfMirror.path(domain: domain, key: $0)?.hasPrefix(directory) ?? false }
                    guard !under.isEmpty else { continue }
                    guard caller.mayWrite(domain.rawValue) else {
                        throw .accessDenied("\(caller) may not reset \(directory): it holds keys of \(domain), which is not its own")
                    }
                    let index = part(domain)
                    parts[index].remove += under
                }
            }
        }
        guard refusals.isEmpty else { throw .invalidValue("the change was not made: " + refusals.sorted().joined(separator: "; ")) }
        // As dconf-service applies a changeset: a directory's reset comes before the keys
        // set in it, so a key both reset and set is set, with the type it is set with.
        for index in parts.indices {
            let set = parts[index].set
            var seen: Set<String> = []
            parts[index].remove = parts[index].remove.filter { set[$0] == nil && seen.insert($0).inserted }
        }
        types = parts.flatMap { part in
            part.set.keys.map { (part.domain, $0, given[part.domain]?[$0] ?? nil) } + part.remove.map { (part.domain, $0, nil) }
        }
    }

    /// The index in ``parts`` of the part of `domain`, made when first asked for. Parts are
    /// changed in place through it: a copy of a part would copy its values at every key.
    private mutating func part(_ domain: DomainName) -> Int {
        if let index = parts.firstIndex(where: { $0.domain == domain }) { return index }
        parts.append(Part(domain: domain))
        return parts.count - 1
    }

    /// The domain and key of the dconf key `path`, which `caller` may change.
    private static func location(_ path: String, caller: CallerIdentity) throws(PreferencesServiceError) -> (DomainName, String) {
        let location = try MappedKey.mapping(path)
        guard caller.mayWrite(location.domain.rawValue) else {
            throw .accessDenied("\(caller) may not change \(path): it lies in \(location.domain), which is not its own")
        }
        return (location.domain, location.key)
    }
}
