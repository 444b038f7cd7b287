import CGIO
import GSettingsPaths

#if canImport(Glibc)
    import Glibc
#endif

/// The installed schemas' keys by the prefsd domain and key each lives at (the GSettings
/// path rule, ``GSettingsPath``): every key of every schema with a fixed path, and the keys
/// of the relocatable schemas at the places ``RelocatedPaths`` knows. Read once from a list
/// of schema directories and never changed: when the schemas change, a new index is read.
///
/// A lookup starts with the domain: a key of a domain no schema describes costs one
/// dictionary lookup.
public final class SchemaIndex: Sendable {
    /// The keys one domain holds.
    private struct DomainKeys: Sendable {
        /// The keys of fixed schemas, by prefsd key (`session/idle-delay`).
        var fixed: [String: SchemaKeyRule] = [:]
        /// Relocatable schemas at known places in the domain: the place's directory pattern
        /// (`*` standing for one directory) and the schema's keys by name.
        var relocated: [(pattern: String, keys: [String: SchemaKeyRule])] = []
    }

    private let domains: [String: DomainKeys]
    /// The directories read that held compiled schemas, highest precedence first.
    public let directories: [String]
    /// Directories whose compiled schemas GLib could not read, with its reason.
    public let problems: [String: String]
    /// How many schemas the index holds (fixed ones and relocatable ones at known places).
    public let schemaCount: Int
    /// How many keys it holds.
    public let keyCount: Int

    /// No schemas: every key takes any value.
    public static let empty = SchemaIndex()

    private init() {
        domains = [:]
        directories = []
        problems = [:]
        schemaCount = 0
        keyCount = 0
    }

    /// The schemas compiled in `directories` (highest precedence first, as
    /// ``SchemaDirectories/glib(environment:)`` lists them): a schema id in several is
    /// read from the first, as GLib reads it. A directory without `gschemas.compiled` is
    /// skipped; one whose file GLib cannot read is named in ``problems``.
    public init(directories: [String]) {
        var source: OpaquePointer?
        var read: [String] = []
        var problems: [String: String] = [:]
        // GLib's chain: each source falls back on the one made before it, so the directory
        // that wins is made last.
        for directory in directories.reversed() {
            guard access(directory + "/gschemas.compiled", F_OK) == 0 else { continue }
            var error: UnsafeMutablePointer<GError>?
            guard let made = g_settings_schema_source_new_from_directory(directory, source, 1, &error) else {
                problems[directory] = error.map { String(cString: $0.pointee.message) } ?? "GLib gave no reason"
                if let error { g_error_free(error) }
                continue
            }
            if let source { g_settings_schema_source_unref(source) }
            source = made
            read.insert(directory, at: 0)
        }
        self.directories = read
        self.problems = problems
        guard let source else {
            domains = [:]
            schemaCount = 0
            keyCount = 0
            return
        }
        // Every key holds a reference to its schema, and every schema to its source.
        defer { g_settings_schema_source_unref(source) }
        let ids = SchemaSource.ids(in: source)
        var domains: [String: DomainKeys] = [:]
        var schemaCount = 0
        var keyCount = 0
        for id in ids.fixed.sorted() {
            guard let schema = g_settings_schema_source_lookup(source, id, 1) else { continue }
            defer { g_settings_schema_unref(schema) }
            guard let pathText = g_settings_schema_get_path(schema) else { continue }
            let path = String(cString: pathText)
            schemaCount += 1
            for rule in Self.rules(of: schema, id: id) {
                guard let location = GSettingsPath(settingsKey: path + rule.name) else { continue }
                // Two schemas at one path: the first by id, as lookups are stable.
                guard domains[location.domain]?.fixed[location.key] == nil else { continue }
                domains[location.domain, default: DomainKeys()].fixed[location.key] = rule
                keyCount += 1
            }
        }
        let relocatable = Set(ids.relocatable)
        for place in RelocatedPaths.knownPlaces where relocatable.contains(place.schema) {
            guard let domain = Self.domain(ofPattern: place.pattern), let schema = g_settings_schema_source_lookup(source, place.schema, 1)
            else { continue }
            defer { g_settings_schema_unref(schema) }
            let rules = Self.rules(of: schema, id: place.schema)
            schemaCount += 1
            keyCount += rules.count
            domains[domain, default: DomainKeys()].relocated.append((place.pattern, Dictionary(rules.map { ($0.name, $0) }) { first, _ in first }))
        }
        self.domains = domains
        self.schemaCount = schemaCount
        self.keyCount = keyCount
    }

    /// Whether any schema has a key in `domain`.
    public func describes(_ domain: String) -> Bool {
        domains[domain] != nil
    }

    /// The schema key stored at `key` of `domain`, if an installed schema describes it:
    /// a fixed schema's key first, else a relocatable schema's at a known place.
    public func rule(domain: String, key: String) -> SchemaKeyRule? {
        guard let keys = domains[domain] else { return nil }
        if let rule = keys.fixed[key] { return rule }
        guard !keys.relocated.isEmpty, let slash = key.lastIndex(of: "/") else { return nil }
        let directory = GSettingsPath.settingsPath(ofDomain: domain) + key[...slash]
        let name = String(key[key.index(after: slash)...])
        for place in keys.relocated where RelocatedPaths.matches(directory, place.pattern) {
            return place.keys[name]
        }
        return nil
    }

    /// The domain every directory of `pattern` lies in, when the `*` lies past the
    /// directories that make the domain (else the domain would change with it).
    private static func domain(ofPattern pattern: String) -> String? {
        guard let star = pattern.firstIndex(of: "*"), let domain = GSettingsPath.domain(ofDirectory: String(pattern.map { $0 == "*" ? "x" : $0 }))
        else { return nil }
        let prefix = GSettingsPath.settingsPath(ofDomain: domain)
        return pattern[..<star].hasPrefix(prefix) ? domain : nil
    }

    /// The keys of the `GSettingsSchema` `schema`, whose id is `id`.
    private static func rules(of schema: OpaquePointer, id: String) -> [SchemaKeyRule] {
        guard let names = g_settings_schema_list_keys(schema) else { return [] }
        defer { g_strfreev(names) }
        return SchemaSource.strings(names).compactMap { SchemaKeyRule(schemaHandle: schema, schema: id, name: $0) }
    }
}
