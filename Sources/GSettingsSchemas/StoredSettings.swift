import CGIO
import GSettingsPaths
import GVariantCoding
import PreferencesModel
import Synchronization

/// What GSettings programs read for values given to it: GLib's own GSettings objects
/// (``SchemaSettings``) over a read-only backend of this process that answers from those
/// values. So the defaults (with the vendor's overrides and translations), the range
/// checks, the aliases of enum nicks, the children of a schema and the printing are GLib's,
/// exactly as in any GSettings program.
///
/// Two kinds of values, each read as its backend reads it:
/// - **prefsd's**, a domain at a time (``setDomain(_:values:forced:)``): a GSettings key is
///   found by the GSettings path rule, and its stored value turned into the key's type by
///   ``VariantCoding``, as prefsd's GSettings module reads it; a forced key is not writable.
/// - **dconf's**, a typed GVariant at a full key (``setDconfValue(_:at:)``): read only when
///   its type is the key's, as dconf's GSettings backend reads it.
///
/// A key of a domain never given reads as unset and is not writable.
public final class StoredSettings: Sendable {
    /// The GSettingsBackend instance (a `PrefsdStoredSettingsInstance`), owned.
    nonisolated(unsafe) let backend: UnsafeMutablePointer<GSettingsBackend>
    private let values: Values

    /// A backend holding nothing yet.
    public init() {
        values = Values()
        backend = StoredSettingsBackend.make(values)
    }

    deinit {
        g_object_unref(backend)
    }

    /// Gives the values prefsd holds in `domain` (what `ReadDomain` answers) and the keys an
    /// administrator forces there, in place of any given before.
    public func setDomain(_ domain: String, values entries: [String: PropertyListValue], forced: Set<String>) {
        values.state.withLock { $0.domains[domain] = Domain(values: entries, forced: forced) }
    }

    /// Changes keys of a domain already given: `changed` set, `removed` gone.
    public func update(_ domain: String, changed: [String: PropertyListValue], removed: [String]) {
        values.state.withLock { state in
            guard var entry = state.domains[domain] else { return }
            entry.values.merge(changed) { _, new in new }
            for key in removed { entry.values[key] = nil }
            state.domains[domain] = entry
        }
    }

    /// Whether the values of `domain` were given.
    public func has(_ domain: String) -> Bool {
        values.state.withLock { $0.domains[domain] != nil }
    }

    /// Gives dconf's value `value` of the full key `path` (`/org/gnome/desktop/session/idle-delay`).
    public func setDconfValue(_ value: SchemaValue, at path: String) {
        values.state.withLock { $0.dconf[path] = value }
    }

    /// A GSettings object of `schema` over these values, at its own path or at `path` (a
    /// relocatable schema's place, a directory ending in `/`). The caller checks that a
    /// relocatable schema is given a path and a fixed one none, as GLib aborts otherwise.
    public func settings(_ schema: Schema, path: String? = nil) -> SchemaSettings {
        SchemaSettings(schema: schema, object: g_settings_new_full(schema.handle, backend, path))
    }

    /// One domain as prefsd serves it.
    struct Domain {
        var values: [String: PropertyListValue]
        var forced: Set<String>
    }

    /// What the backend answers from, behind a lock: GSettings reads from the thread that
    /// asks, and a monitor changes the values from the bus's.
    final class Values: Sendable {
        struct State {
            var domains: [String: Domain] = [:]
            var dconf: [String: SchemaValue] = [:]
        }

        let state = Mutex(State())

        /// A new reference to the GVariant of type `type` GSettings reads for the full key
        /// `key` (the forced value only, when `defaultValue`: the default layer GSettings
        /// asks for), or `nil` when none fits.
        func read(_ key: String, type: String, defaultValue: Bool) -> OpaquePointer? {
            let found: (stored: PropertyListValue?, dconf: SchemaValue?) = state.withLock { state in
                if let typed = state.dconf[key] { return (nil, defaultValue ? nil : typed) }
                guard let location = GSettingsPath(settingsKey: key), let domain = state.domains[location.domain] else { return (nil, nil) }
                if defaultValue && !domain.forced.contains(location.key) { return (nil, nil) }
                return (domain.values[location.key], nil)
            }
            if let typed = found.dconf {
                return typed.type == type ? g_variant_ref(typed.variant) : nil
            }
            return found.stored.flatMap { VariantCoding.variant(from: $0, type: type) }
        }

        /// Whether GSettings may write the full key `key`: its domain was given and does
        /// not force it.
        func isWritable(_ key: String) -> Bool {
            guard let location = GSettingsPath(settingsKey: key) else { return false }
            return state.withLock { state in
                guard let domain = state.domains[location.domain] else { return false }
                return !domain.forced.contains(location.key)
            }
        }
    }
}
