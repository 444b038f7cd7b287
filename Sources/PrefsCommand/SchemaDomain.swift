import GSettingsPaths
import GSettingsSchemas
import PreferencesModel
import PreferencesProxy

/// A domain argument that names an installed GSettings schema (`org.gnome.desktop.interface`)
/// rather than a prefsd domain, the natural mistake of someone used to `gsettings`: where
/// that schema's keys live in prefsd, by the GSettings path rule (`org.gnome.desktop`,
/// `interface/color-scheme`), so that `prefs` can read and delete through it, and refuse to
/// write a stray domain no GSettings program reads.
struct SchemaDomain {
    /// The schema.
    let schema: Schema
    /// Its directory (`/org/gnome/desktop/interface/`).
    let path: String
    /// The prefsd domain its keys are in (`org.gnome.desktop`).
    let prefsdDomain: String
    /// What its keys' names are prefixed with there (`interface/`).
    let prefix: String

    /// The schema named `domain`, when an installed schema with a fixed path and at least
    /// one key has that ID and its keys live in another domain than `domain` itself.
    init?(_ domain: String) {
        guard let schema = SchemaSource.fixedSchema(domain), let path = schema.path,
            let any = schema.keys.first?.name, let location = GSettingsPath(settingsKey: path + any),
            location.domain != domain
        else { return nil }
        self.schema = schema
        self.path = path
        prefsdDomain = location.domain
        prefix = String(location.key.dropLast(any.count))
    }

    /// The schema's ID, as given.
    var id: String { schema.id }

    /// Where the schema's `key` lives in prefsd, or `nil` when the schema has no such key.
    func location(of key: String) -> GSettingsPath? {
        schema.keysByName[key] != nil ? GSettingsPath(settingsKey: path + key) : nil
    }

    /// The message for `prefs write` on the schema's ID: where the key lives instead.
    func writeRefusal(key: String?) -> PrefsError {
        let place: String
        if let key, let location = location(of: key) {
            place = "its key \(key) is `prefs write \(location.domain) \(location.key) …`"
        } else {
            place = "its keys are `\(prefix)KEY` in the domain \(prefsdDomain)"
        }
        return .usage(
            "\(id) is an installed GSettings schema, not a prefsd domain, and no GSettings program reads a domain of that name: \(place) (or use `gsettings set \(id) …`); to create a domain named \(id) all the same, pass --not-a-schema"
        )
    }
}

extension SchemaDomain {
    /// The value of the schema's `key` as prefsd stores it; `.keyNotFound` naming where the
    /// key lives when it holds none (GSettings programs read the schema's default).
    func read(_ key: String, with client: PrefsClient) async throws(PrefsError) -> PropertyListValue {
        guard let location = location(of: key) else {
            throw .usage("\(id) is an installed GSettings schema, and it has no key \"\(key)\"; `gsettings list-keys \(id)` lists its keys")
        }
        guard let value = try await client.readIfPresent(location.domain, location.key) else {
            throw .keyNotFound(domain: location.domain, key: location.key)
        }
        return value
    }

    /// The schema's keys prefsd stores, by their names in the schema.
    func readAll(with client: PrefsClient) async throws(PrefsError) -> [String: PropertyListValue] {
        let entries = try await client.performIfPresent(PreferencesCall.readDomain(prefsdDomain), domain: prefsdDomain) ?? [:]
        var values: [String: PropertyListValue] = [:]
        for (key, value) in entries where key.hasPrefix(prefix) {
            let name = String(key.dropFirst(prefix.count))
            if schema.keysByName[name] != nil { values[name] = value }
        }
        return values
    }
}

extension PrefsClient {
    /// `perform(request)`; when it finds no such domain or key and `domain` is the ID of an
    /// installed GSettings schema whose keys live elsewhere, `otherwise(schema)` instead.
    func perform<Reply>(
        _ request: PreferencesRequest<Reply>, domain: String, key: String?,
        otherwise: (SchemaDomain) async throws(PrefsError) -> Reply
    ) async throws(PrefsError) -> Reply {
        do {
            return try await perform(request, domain: domain, key: key)
        } catch {
            switch error {
            case .domainNotFound, .keyNotFound:
                guard let schema = SchemaDomain(domain) else { throw error }
                return try await otherwise(schema)
            default:
                throw error
            }
        }
    }
}
