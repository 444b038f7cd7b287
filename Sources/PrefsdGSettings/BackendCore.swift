import Dispatch
import GSettingsPaths
import PreferencesModel
import PreferencesProxy
import Synchronization

/// The backend's work, without GLib: a cache of every prefsd domain GSettings asked for,
/// kept true by prefsd's signals, under which the backend's own writes wait in order until
/// prefsd has made them durable. Reads answer from memory; the only wait is the first
/// read of a domain, bounded by ``PrefsdLink/loadTimeout``.
final class BackendCore: Sendable {
    private let link = PrefsdLink()
    private let notifier: any SettingsNotifying
    private let state = Mutex(State())
    private let changes = Atomic<UInt64>(0)
    /// Loads domains (blocking calls), off the host's threads.
    private let loads = DispatchQueue(label: "prefsd.gsettings.load", attributes: .concurrent)
    /// Sends writes one after the other, so prefsd commits them in the order GSettings made them.
    private let writes = DispatchQueue(label: "prefsd.gsettings.write")

    struct State: Sendable {
        var domains: [String: DomainSlot] = [:]
        /// The backend's writes not yet answered by prefsd, oldest first.
        var pending: [PendingBatch] = []
        var nextBatch: UInt64 = 0
        /// GSettings full keys already mapped (`nil`: not mappable).
        var locations: [String: SettingsLocation?] = [:]
    }

    struct DomainSlot: Sendable {
        enum Phase: Sendable { case loading, loaded, unavailable }
        var phase: Phase = .loading
        var values = DomainValues()
        /// Left once the first load ends, however it ends.
        let loaded = DispatchGroup()
        var subscription: PreferencesSubscription?
        /// A reader gave up waiting for the first load and answered the schema default.
        var answeredEarly = false
    }

    struct PendingBatch: Sendable {
        let identifier: UInt64
        let domain: String
        let set: [String: PropertyListValue]
        let remove: Set<String>
    }

    /// A backend that tells `notifier` of changes.
    init(notifier: any SettingsNotifying) {
        self.notifier = notifier
    }

    // MARK: Reading

    /// Counts the changes of what readers may see; it moves, under the lock, after each one.
    var changeCount: UInt64 { changes.load(ordering: .acquiring) }

    /// Marks a change of what readers may see (called with the lock held, after the change).
    private func changed() {
        changes.add(1, ordering: .releasing)
    }

    /// The value of the GSettings full key `settingsKey`: the user's (pending writes first),
    /// or with `defaultValue` the administrator's forced value. With `userValue`, a forced
    /// key answers `nil` (the user's own value under it is not known).
    func read(_ settingsKey: String, defaultValue: Bool = false, userValue: Bool = false) -> PropertyListValue? {
        guard let location = loadedLocation(settingsKey) else { return nil }
        return state.withLock { state in
            guard let slot = state.domains[location.domain] else { return nil }
            let forced = slot.values.forced.contains(location.key)
            if defaultValue { return forced ? slot.values.value(location.key) : nil }
            if userValue && forced { return nil }
            return Self.effective(state, location.domain, location.key)
        }
    }

    /// Whether a write of `settingsKey` can succeed: mappable, prefsd reachable, not forced.
    func isWritable(_ settingsKey: String) -> Bool {
        guard link.isUsable, let location = loadedLocation(settingsKey) else { return false }
        return state.withLock { state in
            guard let slot = state.domains[location.domain], slot.phase == .loaded else { return false }
            return !slot.values.forced.contains(location.key)
        }
    }

    /// Starts loading the domain of the GSettings directory `path`, without waiting.
    func subscribe(_ path: String) {
        guard let domain = SettingsLocation.domain(ofDirectory: path) else { return }
        _ = slot(for: domain)
    }

    /// The location of `settingsKey` once its domain is loaded (or failed to load, or
    /// took longer than the bound: then only the first caller waits, the others answer at
    /// once from what is known); `nil` when it is not mappable.
    private func loadedLocation(_ settingsKey: String) -> SettingsLocation? {
        let fast: (SettingsLocation?, Bool) = state.withLock { state in
            let location: SettingsLocation?
            if let known = state.locations[settingsKey] {
                location = known
            } else {
                location = SettingsLocation(settingsKey: settingsKey)
                if state.locations.count >= 4096 { state.locations.removeAll(keepingCapacity: true) }
                state.locations[settingsKey] = location
            }
            guard let location else { return (nil, true) }
            if let slot = state.domains[location.domain], slot.phase != .loading || slot.answeredEarly { return (location, true) }
            return (location, false)
        }
        guard let location = fast.0 else { return nil }
        if !fast.1 { waitForLoad(location.domain) }
        return location
    }

    private func waitForLoad(_ domain: String) {
        let gate = slot(for: domain)
        if gate.wait(timeout: .now() + .milliseconds(Int(PrefsdLink.loadTimeout.components.seconds * 1000))) == .timedOut {
            state.withLock { $0.domains[domain]?.answeredEarly = true }
        }
    }

    /// The domain's slot, created (and its load started) on first use; returns its gate.
    private func slot(for domain: String) -> DispatchGroup {
        let (gate, start) = state.withLock { state -> (DispatchGroup, Bool) in
            if let slot = state.domains[domain] { return (slot.loaded, false) }
            let slot = DomainSlot()
            slot.loaded.enter()
            state.domains[domain] = slot
            return (slot.loaded, true)
        }
        if start { loads.async { self.load(domain, first: true) } }
        return gate
    }

    /// The value readers see: the newest pending write of the key, else the confirmed value.
    private static func effective(_ state: State, _ domain: String, _ key: String) -> PropertyListValue? {
        for batch in state.pending.reversed() where batch.domain == domain {
            if let value = batch.set[key] { return value }
            if batch.remove.contains(key) { return nil }
        }
        return state.domains[domain]?.values.value(key)
    }

    // MARK: Loading and following prefsd

    /// Loads `domain`, subscribing first when it is not followed yet: the subscription's
    /// calls and the reads go out together, so the load waits for one round trip.
    private func load(_ domain: String, first: Bool) {
        let needsSubscription = state.withLock { $0.domains[domain]?.subscription == nil }
        var subscription: PreferencesSubscription?
        if needsSubscription {
            do throws(PrefsdGSettingsError) {
                subscription = try link.subscribe(domain) { [weak self] event in self?.handle(event, of: domain) }
                state.withLock { $0.domains[domain]?.subscription = subscription }
            } catch {
                finishLoad(domain, first: first, result: .failure(error))
                return
            }
        }
        let result: Result<PrefsdLink.Snapshot, PrefsdGSettingsError>
        do throws(PrefsdGSettingsError) {
            result = .success(try link.load(domain))
        } catch {
            result = .failure(error)
        }
        guard let subscription else { return finishLoad(domain, first: first, result: result) }
        // Answered before the reads were (at once then); a load that failed is told first,
        // so a bus that answers nothing delays no one beyond the load's own bound.
        if case .failure = result { finishLoad(domain, first: first, result: result) }
        do throws(PrefsdGSettingsError) {
            try link.confirm(subscription)
            if case .success = result { finishLoad(domain, first: first, result: result) }
        } catch {
            // Not in force: forgotten, so that the next load subscribes again.
            state.withLock { state in
                if state.domains[domain]?.subscription === subscription { state.domains[domain]?.subscription = nil }
            }
            if case .success = result { finishLoad(domain, first: first, result: .failure(error)) }
        }
    }

    private func finishLoad(
        _ domain: String, first: Bool,
        result: Result<PrefsdLink.Snapshot, PrefsdGSettingsError>
    ) {
        var news = News()
        state.withLock { state in
            guard var slot = state.domains[domain] else { return }
            switch result {
            case .success(let answer):
                let keys = Set(slot.values.entries.keys).union(answer.values.keys)
                let before = keys.map { Self.effective(state, domain, $0) }
                _ = slot.values.recordSnapshot(answer.values, serial: answer.serial)
                let forcingChanged = slot.values.recordForced(answer.forced, serial: answer.forcedSerial)
                let wasUsable = slot.phase == .loaded
                slot.phase = .loaded
                state.domains[domain] = slot
                changed()
                if !first || slot.answeredEarly {
                    for (key, old) in zip(keys, before) where Self.effective(state, domain, key) != old {
                        news.changed(domain, key)
                    }
                    for key in forcingChanged { news.writable(domain, key) }
                    if !wasUsable { news.wholeDomains.insert(domain) }
                }
            case .failure:
                if first { slot.phase = .unavailable }
                state.domains[domain] = slot
            }
        }
        if first { state.withLock { $0.domains[domain]?.loaded }?.leave() }
        if case .failure(let error) = result, first {
            notifier.report("prefsd: GSettings values of \(SettingsLocation.settingsPath(ofDomain: domain)) are the schema defaults: \(error.description)")
        }
        deliver(news, tag: nil)
    }

    private func handle(_ event: PreferencesEvent, of domain: String) {
        switch event {
        case .changed(let change) where change.domain == domain:
            var news = News()
            state.withLock { state in
                guard var slot = state.domains[domain] else { return }
                let keys = change.isWholeDomain
                    ? Set(slot.values.entries.keys).union(change.changed.keys)
                    : Set(change.changed.keys).union(change.removed)
                let before = keys.map { Self.effective(state, domain, $0) }
                if change.isWholeDomain {
                    _ = slot.values.recordSnapshot(change.changed, serial: change.serial)
                } else {
                    for (key, value) in change.changed { slot.values.record(key, value, serial: change.serial) }
                    for key in change.removed { slot.values.record(key, nil, serial: change.serial) }
                }
                state.domains[domain] = slot
                changed()
                for (key, old) in zip(keys, before) where Self.effective(state, domain, key) != old {
                    news.changed(domain, key)
                }
            }
            deliver(news, tag: nil)
        case .forcedKeysChanged(let changedDomain, let keys, let serial) where changedDomain == domain:
            var news = News()
            state.withLock { state in
                guard var slot = state.domains[domain] else { return }
                for key in slot.values.recordForced(Set(keys), serial: serial) { news.writable(domain, key) }
                state.domains[domain] = slot
                changed()
            }
            deliver(news, tag: nil)
        case .reloadNeeded:
            loads.async { self.load(domain, first: false) }
        case .ownerChanged(_, let current):
            state.withLock { $0.domains[domain]?.values.resetSerials() }
            if current != nil { loads.async { self.load(domain, first: false) } }
        case .disconnected:
            link.connectionLost()
        case .changed, .forcedKeysChanged, .volatileChanged:
            break
        }
    }

    // MARK: Writing

    /// Writes (a value) or resets (`nil`) each GSettings full key, as one atomic `Apply`
    /// per domain, in the order of the calls. Readers see the values at once; `false`,
    /// changing nothing, when a key is not mappable, is known to be forced, or its domain
    /// is not loaded (prefsd could not be reached, or did not answer within the bound).
    func write(_ changes: [(key: String, value: PropertyListValue?)], tag: OriginTag?) -> Bool {
        var locations: [(SettingsLocation, PropertyListValue?)] = []
        for change in changes {
            // Waits for the domain's first load, so a forced key is known to be forced.
            guard let location = loadedLocation(change.key) else { return false }
            locations.append((location, change.value))
        }
        guard link.isUsable else { return false }
        let batches = state.withLock { state -> [PendingBatch]? in
            for (location, _) in locations {
                guard let slot = state.domains[location.domain] else { continue }
                // Not loaded (prefsd could not be reached or started, or has not answered
                // within the bound), or forced: refused.
                if slot.phase != .loaded || slot.values.forced.contains(location.key) { return nil }
            }
            var byDomain: [String: (set: [String: PropertyListValue], remove: Set<String>)] = [:]
            for (location, value) in locations {
                if let value {
                    byDomain[location.domain, default: ([:], [])].set[location.key] = value
                    byDomain[location.domain]?.remove.remove(location.key)
                } else {
                    byDomain[location.domain, default: ([:], [])].remove.insert(location.key)
                    byDomain[location.domain]?.set[location.key] = nil
                }
            }
            let batches = byDomain.sorted { $0.key < $1.key }.map { domain, change in
                state.nextBatch += 1
                return PendingBatch(identifier: state.nextBatch, domain: domain, set: change.set, remove: change.remove)
            }
            state.pending.append(contentsOf: batches)
            changed()
            return batches
        }
        guard let batches else { return false }
        notifier.keysChanged(locations.map(\.0.settingsKey), tag: tag)
        for batch in batches { writes.async { self.send(batch) } }
        return true
    }

    /// Waits until every write made so far is answered by prefsd (durable, or refused).
    func sync() {
        writes.sync {}
    }

    private func send(_ batch: PendingBatch) {
        let result: Result<UInt32, PrefsdGSettingsError>
        do throws(PrefsdGSettingsError) {
            result = .success(try link.apply(batch.domain, set: batch.set, remove: Array(batch.remove)))
        } catch {
            result = .failure(error)
        }
        var news = News()
        state.withLock { state in
            let keys = Array(batch.set.keys) + Array(batch.remove)
            let before = keys.map { Self.effective(state, batch.domain, $0) }
            state.pending.removeAll { $0.identifier == batch.identifier }
            if case .success(let serial) = result, state.domains[batch.domain]?.phase == .loaded {
                for (key, value) in batch.set { state.domains[batch.domain]?.values.record(key, value, serial: serial) }
                for key in batch.remove { state.domains[batch.domain]?.values.record(key, nil, serial: serial) }
            }
            changed()
            for (key, old) in zip(keys, before) where Self.effective(state, batch.domain, key) != old {
                news.changed(batch.domain, key)
            }
        }
        if case .failure(let error) = result {
            notifier.report("prefsd: a GSettings change under \(SettingsLocation.settingsPath(ofDomain: batch.domain)) was not saved: \(error.description)")
        }
        deliver(news, tag: nil)
    }

    // MARK: Telling GSettings

    /// What changed, gathered under the lock and told after it.
    private struct News {
        var keys: [String] = []
        var writableKeys: [String] = []
        var wholeDomains: Set<String> = []

        mutating func changed(_ domain: String, _ key: String) {
            if let location = SettingsLocation(domain: domain, key: key) { keys.append(location.settingsKey) }
        }

        mutating func writable(_ domain: String, _ key: String) {
            if let location = SettingsLocation(domain: domain, key: key) { writableKeys.append(location.settingsKey) }
        }
    }

    private func deliver(_ news: News, tag: OriginTag?) {
        if !news.writableKeys.isEmpty { notifier.writableChanged(news.writableKeys) }
        for domain in news.wholeDomains { notifier.pathChanged(SettingsLocation.settingsPath(ofDomain: domain)) }
        if !news.keys.isEmpty { notifier.keysChanged(news.keys, tag: tag) }
    }

    /// Ends the subscriptions and closes the connection (the GObject is being finalized).
    func close() {
        let subscriptions = state.withLock { state in state.domains.values.compactMap(\.subscription) }
        for subscription in subscriptions { subscription.cancel() }
        link.close()
    }
}
