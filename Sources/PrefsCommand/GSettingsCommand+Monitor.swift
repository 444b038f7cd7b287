import GSettingsPaths
import GSettingsSchemas
import PreferencesProxy

/// `monitor`: one line per change of a key of the schema, `KEY: VALUE`, as gsettings prints
/// GSettings' `changed` signals, until the process is interrupted.
extension GSettingsInvocation {
    /// Follows prefsd's changes of the schema's domain and prints each key they touch (or
    /// the one key named) with the value GSettings reads for it now.
    func monitor() async throws {
        guard let schema else { return }
        let stored = StoredSettings()
        let settings = stored.settings(schema, path: path)
        let watched = key.map { [$0.name] } ?? schema.keyNames
        let client = try PrefsClient.connectToSessionBus()
        defer { client.close() }
        guard let domain = GSettingsPath.domain(ofDirectory: settings.path) else {
            // No prefsd key maps to the path: nothing ever changes there.
            while true { try await Task.sleep(for: .seconds(3600)) }
        }
        let events: AsyncStream<PreferencesEvent>
        do {
            events = try await client.proxy.events(in: [domain])
        } catch {
            throw PrefsClient.map(error, domain: domain, key: nil)
        }
        // Loaded once followed, so that no change falls between the two.
        try await Self.load([settings], into: stored, with: client, forced: false)
        for await event in events {
            var names: [String] = []
            switch event {
            case .changed(let change):
                if change.isWholeDomain {
                    stored.setDomain(domain, values: change.changed, forced: [])
                    names = watched
                } else {
                    stored.update(domain, changed: change.changed, removed: change.removed)
                    names = (Array(change.changed.keys) + change.removed).compactMap { Self.name(of: $0, in: domain, at: settings) }
                        .filter(watched.contains).sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
                }
            case .ownerChanged, .reloadNeeded:
                // prefsd started again, or changes were lost: everything is read again, and
                // every key told, as GSettings tells a whole path that changed.
                let values = try await client.performIfPresent(PreferencesCall.readDomain(domain), domain: domain) ?? [:]
                stored.setDomain(domain, values: values, forced: [])
                names = watched
            case .disconnected:
                throw PrefsError.noBus(detail: "the session bus went away; monitoring stopped")
            case .volatileChanged, .forcedKeysChanged:
                continue
            }
            GSettingsText.print(names.map { "\($0): \(settings.value($0).text)\n" }.joined())
        }
    }

    /// The name of the schema key that the prefsd key `key` of `domain` is, when it is one
    /// of `settings`' schema (directly at its path).
    private static func name(of key: String, in domain: String, at settings: SchemaSettings) -> String? {
        let full = GSettingsPath.settingsPath(ofDomain: domain) + key
        guard full.hasPrefix(settings.path) else { return nil }
        let name = String(full.dropFirst(settings.path.count))
        return settings.schema.keysByName[name] != nil ? name : nil
    }
}
