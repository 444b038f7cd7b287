import GSettingsPaths
import GSettingsSchemas
import PreferencesProxy

/// The verbs that read values: what GSettings programs read from prefsd, through GLib's
/// own GSettings objects over the values prefsd serves (``StoredSettings``).
extension GSettingsInvocation {
    /// `get`, `writable`, `list-children` and `list-recursively`.
    func read() async throws {
        let stored = StoredSettings()
        guard let schema else {
            // list-recursively with no schema: every fixed schema, and the relocatable
            // children of each (its fixed children are listed in their own turn).
            var nodes: [SchemaSettings] = []
            for id in source.ids.fixed {
                if let found = source.schema(id) { nodes += Self.tree(stored.settings(found), relocatableOnly: true) }
            }
            try await list(nodes, stored: stored)
            return
        }
        let settings = stored.settings(schema, path: path)
        switch verb {
        case .get:
            guard let key else { return }
            try await withClient { client throws(PrefsError) in try await Self.load([settings], into: stored, with: client, forced: false) }
            GSettingsText.print(settings.value(key.name).text + "\n")
        case .writable:
            guard let key else { return }
            let writable = try await withClient { client throws(PrefsError) -> Bool in
                try await Self.load([settings], into: stored, with: client, forced: true)
                guard settings.isWritable(key.name) else { return false }
                if case .success = try await GSettingsWriter.find(with: client) { return true }
                return false
            }
            GSettingsText.print(writable ? "true\n" : "false\n")
        case .listChildren:
            let children = settings.children()
            let width = children.map(\.name.utf8.count).max() ?? 0
            GSettingsText.print(
                Self.lines(
                    children.map { child in
                        let padded = child.name + String(repeating: " ", count: width - child.name.utf8.count)
                        let target = child.settings.schema.isRelocatable ? child.settings.schema.id + ":" + child.settings.path : child.settings.schema.id
                        return padded + "   " + target
                    }))
        default:
            try await list(Self.tree(settings, relocatableOnly: false), stored: stored)
        }
    }

    /// `settings` and its children, depth first, each before its children, as
    /// `gsettings list-recursively` walks them; with `relocatableOnly`, children of fixed
    /// schemas are left out (they are walked from their own schema).
    static func tree(_ settings: SchemaSettings, relocatableOnly: Bool) -> [SchemaSettings] {
        [settings]
            + settings.children().flatMap { child in
                relocatableOnly && !child.settings.schema.isRelocatable ? [] : tree(child.settings, relocatableOnly: relocatableOnly)
            }
    }

    /// Prints every key of each of `nodes` with the value GSettings reads for it:
    /// `SCHEMA KEY VALUE`, keys in byte order.
    private func list(_ nodes: [SchemaSettings], stored: StoredSettings) async throws {
        try await withClient { client throws(PrefsError) in try await Self.load(nodes, into: stored, with: client, forced: false) }
        var text = ""
        for node in nodes {
            for name in node.schema.keyNames {
                text += node.schema.id + " " + name + " " + node.value(name).text + "\n"
            }
        }
        GSettingsText.print(text)
    }

    /// Runs `body` with a client on the session bus, closed after it.
    func withClient<T>(_ body: (PrefsClient) async throws(PrefsError) -> T) async throws(PrefsError) -> T {
        let client = try PrefsClient.connectToSessionBus()
        defer { client.close() }
        return try await body(client)
    }

    /// Gives `stored` the values prefsd serves in the domains the keys of `nodes` live in
    /// (`ReadDomain`), and, with `forced`, the keys an administrator forces there.
    static func load(_ nodes: [SchemaSettings], into stored: StoredSettings, with client: PrefsClient, forced: Bool) async throws(PrefsError) {
        let domains = Set(nodes.compactMap { GSettingsPath.domain(ofDirectory: $0.path) })
        for domain in domains.sorted() where !stored.has(domain) {
            let values = try await client.performIfPresent(PreferencesCall.readDomain(domain), domain: domain) ?? [:]
            let forcedKeys = forced ? try await client.perform(PreferencesCall.forcedKeys(domain), domain: domain) : []
            stored.setDomain(domain, values: values, forced: Set(forcedKeys))
        }
    }
}
