import PreferencesModel
import PreferencesStore

/// What an administrator sets besides managed (forced) domains: **defaults**, which a
/// user's own value overrides (`/etc/prefsd/defaults/<domain>.plist`, the values of
/// dconf's system databases and of xfconf's administrator channel files), and the keys
/// dconf's system databases and xfconf's `locked` lists **lock**, which are forced like
/// managed keys.
struct AdministratorSettings: Sendable, Equatable {
    /// A key a dconf system database locks, with the value it is locked to: the value of
    /// the database holding the lock, else of the first database after it in the profile
    /// that sets the key (as dconf reads it). `nil` when none does: the key reads as
    /// absent (GSettings answers the schema default) and cannot be changed.
    struct Lock: Sendable, Equatable {
        var value: PropertyListValue?
    }

    /// Defaults, per domain (never empty dictionaries).
    var defaults: [DomainName: [String: PropertyListValue]] = [:]
    /// Locked keys, per domain (never empty dictionaries).
    var locks: [DomainName: [String: Lock]] = [:]
    /// The GVariant types of the values xfconf's channel files set, per domain: the types
    /// xfconf's calls give those values back with (an `int` as `i`, not as an integer's `x`).
    var xfconfTypes: [DomainName: [String: String]] = [:]

    /// Whether it sets nothing at all.
    var isEmpty: Bool { defaults.isEmpty && locks.isEmpty }

    /// Every key it sets, per domain.
    var keys: [DomainName: Set<String>] {
        var keys = defaults.mapValues { Set($0.keys) }
        for (domain, locked) in locks { keys[domain, default: []].formUnion(locked.keys) }
        return keys
    }
}

extension AdministratorSettings {
    /// Adds what the administrator's xfconf channel files set (a domain `xfconf.C` of its
    /// own: no other source sets keys there but a managed or plist file, which go before).
    mutating func addXfconfChannels(_ channels: XfconfChannelsReader.Settings) {
        for (domain, values) in channels.defaults { defaults[domain, default: [:]].merge(values) { earlier, _ in earlier } }
        for (domain, locked) in channels.locks { locks[domain, default: [:]].merge(locked) { earlier, _ in earlier } }
        for (domain, types) in channels.types { xfconfTypes[domain, default: [:]].merge(types) { earlier, _ in earlier } }
    }
}

extension DomainState {
    /// Puts new administrator settings in force and says what changed for readers (the
    /// same account as managed domains give: `ForcedKeysChanged` for the domains whose
    /// forced keys changed, `Changed` for the values readers see change, notes for the
    /// journal).
    mutating func replaceAdministrator(with settings: AdministratorSettings) -> ForcedUpdate {
        var affected = administrator.keys
        for (domain, keys) in settings.keys { affected[domain, default: []].formUnion(keys) }
        return replacingLayers(affecting: affected) { $0.administrator = settings }
    }

    /// Changes an administrator's layer with `replace`, and reports how what readers see of
    /// the `affected` keys (every key the layer set before or sets now) changed.
    mutating func replacingLayers(affecting affected: [DomainName: Set<String>], _ replace: (inout DomainState) -> Void) -> ForcedUpdate {
        let domains = affected.keys.sorted()
        var before: [DomainName: [String: PropertyListValue]] = [:]
        var forcedBefore: [DomainName: [String]] = [:]
        for domain in domains {
            forcedBefore[domain] = forcedKeys(domain: domain)
            for key in affected[domain] ?? [] { before[domain, default: [:]][key] = value(domain: domain, key: key) }
        }
        replace(&self)
        var update = ForcedUpdate()
        for domain in domains {
            let forcedNow = forcedKeys(domain: domain)
            if forcedNow != forcedBefore[domain] { update.forcedKeys[domain] = forcedNow }
            var change = Change(domain: domain)
            for key in (affected[domain] ?? []).sorted() {
                let now = value(domain: domain, key: key)
                let previous = before[domain]?[key]
                guard now != previous else { continue }
                if let now { change.changed[key] = now } else { change.removed.append(key) }
                update.notes[domain, default: []].append(.note(domain, key: key, value: now, previous: previous))
            }
            if !change.isEmpty { update.changes.append(change) }
        }
        return update
    }

    /// The administrator's default of `key` in `domain`, when it has one.
    func administratorDefault(domain: DomainName, key: String) -> PropertyListValue? {
        administrator.defaults[domain]?[key]
    }

    /// What a read will answer for a key that is not forced, once every staged batch is
    /// durable: the user's value, else the administrator's default.
    func projectedVisible(domain: DomainName, key: String) -> PropertyListValue? {
        projected(domain: domain, key: key) ?? administratorDefault(domain: domain, key: key)
    }

    /// `change` (keys whose stored value changed) as readers see it, given what they saw
    /// `before` of each of its keys: a key whose read answers the same (forced, or set to
    /// its default) is left out, and a removed key that reveals a default is changed to it.
    func visible(_ change: Change, before: [String: PropertyListValue]) -> Change {
        var visible = Change(domain: change.domain)
        for key in change.changed.keys.sorted() + change.removed {
            let now = value(domain: change.domain, key: key)
            guard now != before[key] else { continue }
            if let now { visible.changed[key] = now } else { visible.removed.append(key) }
        }
        return visible
    }

    /// Whether an administrator sets anything in `domain` (forced, locked or default), so
    /// that what readers see may differ from what is stored.
    func isAdministered(_ domain: DomainName) -> Bool {
        forced[domain] != nil || administrator.defaults[domain] != nil || administrator.locks[domain] != nil
    }
}
