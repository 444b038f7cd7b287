import CGIO
import GSettingsPaths
import Synchronization

/// The GSettings schemas installed on this machine (GLib's default schema source:
/// `XDG_DATA_DIRS`, `GSETTINGS_SCHEMA_DIR`), or those and a directory of more (as
/// `gsettings --schemadir` reads them), and which of them describe a prefsd domain under
/// the GSettings path rule (``GSettingsPath``). One schema is looked up alone
/// (``schema(_:)``); every schema is read on first use of the collections, once.
///
/// `@unchecked Sendable`: the `GSettingsSchemaSource` handle is an immutable GLib object
/// whose reference count is atomic, and GLib's lookups only read it; what is read of it is
/// kept behind a lock.
public final class SchemaSource: @unchecked Sendable {
    /// The `GSettingsSchemaSource` the schemas are read from; `nil` when GLib finds none.
    private let handle: OpaquePointer?
    /// Every schema, once read.
    private let loaded = Mutex<Catalog?>(nil)

    /// Every schema of the source, by kind and by domain.
    private struct Catalog {
        var fixed: [String: Schema] = [:]
        var relocatable: [String: Schema] = [:]
        var fixedByDomain: [String: [Schema]] = [:]
    }

    /// The installed schemas; none when GLib finds no schema source.
    public convenience init() {
        self.init(handle: g_settings_schema_source_get_default().map { g_settings_schema_source_ref($0) })
    }

    /// The installed schemas and those compiled in `directory` (its `gschemas.compiled`),
    /// which win over installed ones of the same id, as `gsettings --schemadir` reads them.
    /// - Throws: ``SchemaError/unreadableDirectory(_:detail:)`` with GLib's reason when the
    ///   directory holds no compiled schemas GLib can read.
    public convenience init(addingDirectory directory: String) throws(SchemaError) {
        var error: UnsafeMutablePointer<GError>?
        guard let source = g_settings_schema_source_new_from_directory(directory, g_settings_schema_source_get_default(), 0, &error) else {
            let detail = error.map { String(cString: $0.pointee.message) } ?? "GLib gave no reason"
            if let error { g_error_free(error) }
            throw .unreadableDirectory(directory, detail: detail)
        }
        self.init(handle: source)
    }

    /// The schemas of `source`, a reference this object takes over.
    private init(handle source: OpaquePointer?) {
        handle = source
    }

    deinit {
        if let handle { g_settings_schema_source_unref(handle) }
    }

    /// Every schema, read now if it was not yet (outside the lock: reading translates
    /// summaries, which reads files).
    private var catalog: Catalog {
        if let catalog = loaded.withLock({ $0 }) { return catalog }
        var catalog = Catalog()
        let (fixedIDs, relocatableIDs) = ids
        for id in fixedIDs {
            if let schema = schema(id), schema.path != nil { catalog.fixed[id] = schema }
        }
        for id in relocatableIDs {
            if let schema = schema(id) { catalog.relocatable[id] = schema }
        }
        var byDomain: [String: [Schema]] = [:]
        for schema in catalog.fixed.values {
            guard let path = schema.path, let domain = GSettingsPath.domain(ofDirectory: path) else { continue }
            byDomain[domain, default: []].append(schema)
        }
        catalog.fixedByDomain = byDomain.mapValues { $0.sorted { $0.id < $1.id } }
        return loaded.withLock { kept in
            if kept == nil { kept = catalog }
            return kept ?? catalog
        }
    }

    /// Schemas with a fixed path, by id.
    public var fixed: [String: Schema] { catalog.fixed }

    /// Relocatable schemas (no path of their own), by id.
    public var relocatable: [String: Schema] { catalog.relocatable }

    /// The fixed schemas by the prefsd domain their keys live in.
    private var fixedByDomain: [String: [Schema]] { catalog.fixedByDomain }

    /// Whether GLib found any schema source at all (`gsettings` says "No schemas installed"
    /// when it did not).
    public var isEmpty: Bool { handle == nil }

    /// The schema `id`, fixed or relocatable, looked up alone; `nil` when none has that id.
    public func schema(_ id: String) -> Schema? {
        handle.flatMap { Schema(source: $0, id: id) }
    }

    /// The ids of the fixed schemas and of the relocatable ones, each in byte order
    /// (`gsettings list-schemas`, `list-relocatable-schemas`), without reading the schemas.
    public var ids: (fixed: [String], relocatable: [String]) {
        guard let handle else { return ([], []) }
        let listed = Self.ids(in: handle)
        let order: (String, String) -> Bool = { $0.utf8.lexicographicallyPrecedes($1.utf8) }
        return (listed.fixed.sorted(by: order), listed.relocatable.sorted(by: order))
    }

    /// The ids of the fixed and of the relocatable schemas of the GLib schema source
    /// `source` and its parents, in GLib's order, without reading the schemas.
    static func ids(in source: OpaquePointer) -> (fixed: [String], relocatable: [String]) {
        var fixedIDs: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        var relocatableIDs: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?
        g_settings_schema_source_list_schemas(source, 1, &fixedIDs, &relocatableIDs)
        defer {
            g_strfreev(fixedIDs)
            g_strfreev(relocatableIDs)
        }
        return (strings(fixedIDs), strings(relocatableIDs))
    }

    /// The installed schema `id` when it has a fixed path, looked up alone (without loading
    /// every schema as ``init()`` does); `nil` for an unknown or relocatable schema.
    public static func fixedSchema(_ id: String) -> Schema? {
        guard let source = g_settings_schema_source_get_default(), let schema = Schema(source: source, id: id), schema.path != nil
        else { return nil }
        return schema
    }

    /// The fixed schema whose path is the directory `path` (`/org/gnome/desktop/session/`).
    public func fixedSchema(atPath path: String) -> Schema? {
        guard let domain = GSettingsPath.domain(ofDirectory: path) else { return nil }
        return fixedByDomain[domain]?.first { $0.path == path }
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

    /// The strings of a `NULL`-ended list GLib gave.
    static func strings(_ list: UnsafeMutablePointer<UnsafeMutablePointer<gchar>?>?) -> [String] {
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
