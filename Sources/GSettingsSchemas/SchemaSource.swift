import CGIO
import GSettingsPaths

/// The GSettings schemas installed on this machine (GLib's default schema source:
/// `XDG_DATA_DIRS`, `GSETTINGS_SCHEMA_DIR`), loaded once, and which of them describe a
/// prefsd domain under the GSettings path rule (``GSettingsPath``).
public final class SchemaSource: Sendable {
    /// Schemas with a fixed path, by id.
    public let fixed: [String: Schema]
    /// Relocatable schemas (no path of their own), by id.
    public let relocatable: [String: Schema]
    /// The fixed schemas by the prefsd domain their keys live in.
    private let fixedByDomain: [String: [Schema]]

    /// The installed schemas; none when GLib finds no schema source.
    public init() {
        var fixed: [String: Schema] = [:]
        var relocatable: [String: Schema] = [:]
        if let source = g_settings_schema_source_get_default() {
            var fixedIDs: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
            var relocatableIDs: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
            g_settings_schema_source_list_schemas(source, 1, &fixedIDs, &relocatableIDs)
            for id in Self.strings(fixedIDs) {
                if let schema = Schema(source: source, id: id), schema.path != nil { fixed[id] = schema }
            }
            for id in Self.strings(relocatableIDs) {
                if let schema = Schema(source: source, id: id) { relocatable[id] = schema }
            }
            g_strfreev(fixedIDs)
            g_strfreev(relocatableIDs)
        }
        self.fixed = fixed
        self.relocatable = relocatable
        var byDomain: [String: [Schema]] = [:]
        for schema in fixed.values {
            guard let path = schema.path, let domain = GSettingsPath.domain(ofDirectory: path) else { continue }
            byDomain[domain, default: []].append(schema)
        }
        fixedByDomain = byDomain.mapValues { $0.sorted { $0.id < $1.id } }
    }

    /// The installed schema `id` when it has a fixed path, looked up alone (without loading
    /// every schema as ``init()`` does); `nil` for an unknown or relocatable schema.
    public static func fixedSchema(_ id: String) -> Schema? {
        guard let source = g_settings_schema_source_get_default(), let schema = Schema(source: source, id: id), schema.path != nil
        else { return nil }
        return schema
    }

    /// The GVariant type of every key of every schema with a fixed path, by full key
    /// (`/org/gnome/desktop/interface/cursor-size` → `i`). Relocatable schemas have no
    /// path of their own and are not included.
    public var fixedKeyTypes: [String: String] {
        var types: [String: String] = [:]
        for schema in fixed.values.sorted(by: { $0.id < $1.id }) {
            guard let path = schema.path else { continue }
            for key in schema.keys { types[path + key.name] = key.type }
        }
        return types
    }

    /// Every domain that a fixed-path schema describes.
    public var domains: Set<String> { Set(fixedByDomain.keys) }

    /// The schemas that describe `domain`, each at its path: the fixed schemas whose path
    /// lies in it, then the relocatable schemas found at the directories of `storedKeys`
    /// (the domain's keys) that no fixed schema covers (see ``RelocatedPaths``); sorted by path.
    public func instances(inDomain domain: String, storedKeys: some Sequence<String>) -> [SchemaInstance] {
        var instances = (fixedByDomain[domain] ?? []).compactMap { schema in
            schema.path.map { SchemaInstance(schema: schema, path: $0, domain: domain, isRelocated: false) }
        }
        let covered = Set(instances.map(\.path))
        var keysByDirectory: [String: Set<String>] = [:]
        for key in storedKeys {
            guard GSettingsPath(domain: domain, key: key) != nil else { continue }
            let full = GSettingsPath.settingsPath(ofDomain: domain) + key
            guard let slash = full.lastIndex(of: "/") else { continue }
            let directory = String(full[...slash])
            guard !covered.contains(directory) else { continue }
            keysByDirectory[directory, default: []].insert(String(full[full.index(after: slash)...]))
        }
        for (directory, names) in keysByDirectory {
            if let schema = RelocatedPaths.schema(for: directory, keyNames: names, in: self) {
                instances.append(SchemaInstance(schema: schema, path: directory, domain: domain, isRelocated: true))
            }
        }
        return instances.sorted { $0.path < $1.path }
    }

    /// Whether any schema describes `domain` through a fixed path (relocated instances
    /// need the domain's keys: ``instances(inDomain:storedKeys:)``).
    public func describes(_ domain: String) -> Bool {
        fixedByDomain[domain] != nil
    }

    /// The fixed schemas of `domain` (for search before its keys are read).
    public func fixedSchemas(inDomain domain: String) -> [Schema] {
        fixedByDomain[domain] ?? []
    }

    private static func strings(_ list: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
        guard let list else { return [] }
        var result: [String] = []
        var index = 0
        while let item = list[index] {
            result.append(String(cString: item))
            index += 1
        }
        return result
    }
}

/// A schema at one path: a fixed schema at its own, or a relocatable one where it is used.
public struct SchemaInstance: Sendable {
    /// The schema.
    public let schema: Schema
    /// The directory its keys are at (`/org/gnome/terminal/legacy/profiles:/:b1dc…/`).
    public let path: String
    /// The prefsd domain the keys are in.
    public let domain: String
    /// Whether the schema is relocatable and placed at `path`.
    public let isRelocated: Bool

    /// The prefsd key of the schema key `name` in ``domain`` (`interface/gtk-theme`).
    public func prefsdKey(_ name: String) -> String? {
        GSettingsPath(settingsKey: path + name).flatMap { $0.domain == domain ? $0.key : nil }
    }
}
