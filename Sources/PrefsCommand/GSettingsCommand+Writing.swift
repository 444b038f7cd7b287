import GSettingsPaths
import GSettingsSchemas
import PreferencesProxy

/// The verbs that write: `set`, `reset`, `reset-recursively`.
extension GSettingsInvocation {
    /// One key to set (`value`) or reset (`nil`): its full GSettings key.
    typealias Change = (settingsKey: String, value: SchemaValue?)

    /// Runs `set`, `reset` or `reset-recursively`; returns the exit status.
    func write() async throws -> Int32 {
        guard let schema else { return 0 }
        let stored = StoredSettings()
        let settings = stored.settings(schema, path: path)
        switch verb {
        case .set:
            guard let key, let text = value else { return 0 }
            let parsed: SchemaValue
            do {
                parsed = try key.value(parsingCommandLine: text)
            } catch {
                switch error {
                case .unparsableText(_, let context): GSettingsText.printError(context)
                case .outOfRange: GSettingsText.printError(GSettingsText.message("The provided value is outside of the valid range\n"))
                default: GSettingsText.printError(error.description + "\n")
                }
                return 1
            }
            return try await change([(settings.path + key.name, parsed)], skippingForced: false)
        case .reset:
            guard let key else { return 0 }
            return try await change([(settings.path + key.name, nil)], skippingForced: false)
        default:
            // The schema's keys and its children's (not theirs in turn), as gsettings resets them.
            let nodes = [settings] + settings.children().map(\.settings)
            return try await change(nodes.flatMap { node in node.schema.keyNames.map { (node.path + $0, nil) } }, skippingForced: true)
        }
    }

    /// Makes `changes` in prefsd, where the session's GSettings programs read them; returns
    /// the exit status. A key an administrator forces is refused as gsettings refuses a key
    /// that is not writable, with the reason, unless `skippingForced`: then it is left as it
    /// is and named.
    private func change(_ changes: [Change], skippingForced: Bool) async throws -> Int32 {
        var located: [(location: GSettingsPath, value: SchemaValue?)] = []
        for change in changes {
            guard let location = GSettingsPath(settingsKey: change.settingsKey) else {
                return notWritable(
                    "prefsd cannot hold \(change.settingsKey): its key would break prefsd's limits on keys (1–1024 bytes of UTF-8 in normal form C)")
            }
            located.append((location, change.value))
        }
        return try await withClient { client throws(PrefsError) -> Int32 in
            var forced: [String: Set<String>] = [:]
            for domain in Set(located.map(\.location.domain)).sorted() {
                forced[domain] = Set(try await client.perform(PreferencesCall.forcedKeys(domain), domain: domain))
            }
            let held = located.filter { forced[$0.location.domain]?.contains($0.location.key) == true }
            if !skippingForced, let first = held.first {
                return notWritable(forcedReason(first.location))
            }
            let writer: GSettingsWriter
            switch try await GSettingsWriter.find(with: client) {
            case .success(let found): writer = found
            case .failure(let refusal):
                Output.error("nothing was changed: \(refusal.reason)")
                return 1
            }
            if !held.isEmpty {
                Output.error("left as they are, forced by an administrator: " + held.map(\.location.settingsKey).joined(separator: ", "))
            }
            let free = located.filter { forced[$0.location.domain]?.contains($0.location.key) != true }
            guard !free.isEmpty else { return 0 }
            do throws(PrefsError) {
                try await writer.write(free, with: client)
            } catch {
                guard case .forced(_, let detail) = error else { throw error }
                return notWritable(detail)
            }
            return 0
        }
    }

    /// gsettings' refusal of a key that is not writable, and why (`reason`); status 1.
    private func notWritable(_ reason: String) -> Int32 {
        GSettingsText.printError(GSettingsText.message("The key is not writable\n"))
        Output.error(reason)
        return 1
    }

    /// Why the key at `location` is not writable: an administrator forces it.
    private func forcedReason(_ location: GSettingsPath) -> String {
        "an administrator forces \(location.settingsKey) (the key \(location.key) of prefsd's domain \(location.domain))"
    }
}
