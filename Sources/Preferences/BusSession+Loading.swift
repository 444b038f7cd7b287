import DBus
import Dispatch
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

extension BusSession {
    /// Makes sure the domains are in the cache: for each one not loaded yet, subscribes to
    /// its signals, then reads it and its forced keys. Waits for domains another thread is
    /// loading. When prefsd cannot be reached the domains stay unloaded, and reads fall
    /// back on the local domains.
    /// - Returns: whether every domain is loaded.
    @discardableResult
    func ensureLoaded(_ domains: [DomainName]) -> Bool {
        var mine: [DomainName] = []
        var others: [DispatchGroup] = []
        let now = ContinuousClock.now
        let allLoaded = state.withLock { state -> Bool in
            var allLoaded = true
            for domain in domains where !state.cache.isLoaded(domain) {
                allLoaded = false
                if let retry = state.retryAfter[domain], now < retry { continue }
                if let loading = state.loading[domain] {
                    others.append(loading.done)
                } else {
                    let loading = Loading()
                    loading.done.enter()
                    state.loading[domain] = loading
                    mine.append(domain)
                }
            }
            return allLoaded
        }
        if mine.isEmpty && others.isEmpty { return allLoaded }
        for domain in mine { load(domain) }
        for group in others { _ = group.wait(timeout: .now() + .seconds(30)) }
        return state.withLock { state in domains.allSatisfy { state.cache.isLoaded($0) } }
    }

    /// Reads a loaded domain again in the background, because a signal left some of its
    /// values out (`invalidated`): its signals wait meanwhile, and the objects that search it
    /// are told what changed once it is read.
    func refresh(_ domain: DomainName) {
        let start = state.withLock { state -> Bool in
            guard state.cache.isLoaded(domain), state.loading[domain] == nil else { return false }
            let loading = Loading()
            loading.done.enter()
            state.loading[domain] = loading
            return true
        }
        guard start else { return }
        DispatchQueue.global().async { [self] in load(domain, refreshing: true) }
    }

    /// Loads a domain (subscribing to its signals first), or with `refreshing` reads a loaded
    /// one again; ends the domain's `loading`.
    private func load(_ domain: DomainName, refreshing: Bool = false) {
        let answer: Snapshot?
        do {
            let connection = try connection()
            do {
                // A match rule, or a subscription at the sandbox door inside Flatpak.
                if !refreshing {
                    _ = try connection.callBlocking(PreferencesEndpoint.current.followCall(domain: domain.rawValue), timeout: Self.callTimeout)
                }
            } catch {
                throw PreferencesError(error)
            }
            answer = try read(domain)
        } catch {
            answer = nil
        }
        // One critical section from "loading" to "loaded": a signal arriving meanwhile is
        // either buffered here or applied after, never dropped or applied out of order.
        let (loading, again) = mutateState(domain: domain, notify: refreshing) { state -> (Loading?, Bool) in
            state.retryAfter[domain] = answer == nil ? .now + .seconds(1) : nil
            let loading = state.loading.removeValue(forKey: domain)
            guard let answer else {
                state.cache.unload(domain)
                return (loading, false)
            }
            state.cache.load(domain, values: answer.values, forced: answer.forced)
            // Signals that came after the service read the domain for us still apply;
            // those that came before are in what it answered.
            var again = false
            for signal in loading?.buffered ?? [] where signal.serial > answer.serial {
                guard let parsed = DomainSignal(signal) else { continue }
                parsed.apply(to: &state.cache)
                again = again || parsed.leavesValuesOut
            }
            return (loading, again)
        }
        loading?.done.leave()
        if again { refresh(domain) }
    }

    /// What the service answered for a domain, and the serial of its last answer: signals
    /// with a higher serial were sent after it.
    private struct Snapshot {
        var values: [String: PropertyListValue]
        var forced: Set<String>
        var serial: UInt32
    }

    private func read(_ domain: DomainName) throws(PreferencesError) -> Snapshot {
        let forcedReply = try callBlocking(PreferencesCall.forcedKeys(domain.rawValue))
        let forced = Set(forcedReply.value)
        // Signals sent after the first answer are applied on top of both answers: a
        // ForcedKeysChanged between the two is not in the forced keys, and applying a
        // Changed that ReadDomain already shows again changes nothing.
        let serial = forcedReply.serial
        do {
            return Snapshot(values: try callBlocking(PreferencesCall.readDomain(domain.rawValue)).value, forced: forced, serial: serial)
        } catch .notFound {
            return Snapshot(values: [:], forced: forced, serial: serial)
        }
    }

    // MARK: Signals

    /// Takes a signal from the bus (on the connection's queue): applies it to a loaded
    /// domain, keeps it for a domain being loaded, ignores it otherwise.
    func receive(_ signal: DBusMessage) {
        if signal.member == "NameOwnerChanged", signal.sender == "org.freedesktop.DBus",
           signal.body.first == .string(PreferencesEndpoint.current.busName) {
            return unloadAll()
        }
        guard signal.interface == PreferencesBus.interface, case .string(let name)? = signal.body.first,
              let domain = try? DomainName(name) else { return }
        let loaded = state.withLock { state -> Bool in
            // A domain being read (again) holds its signals back until the answer is in.
            if state.loading[domain] != nil {
                state.loading[domain]?.buffered.append(signal)
                return false
            }
            return state.cache.isLoaded(domain)
        }
        if loaded { apply(signal) }
    }

    private func apply(_ signal: DBusMessage) {
        guard let parsed = DomainSignal(signal) else { return }
        let previous = state.withLock { $0.cache.domains[parsed.domain]?.forced ?? [] }
        mutate(domain: parsed.domain, keys: parsed.keys(forcedBefore: previous)) { parsed.apply(to: &$0) }
        if parsed.leavesValuesOut { refresh(parsed.domain) }
    }
}

/// A signal of the service about one domain, parsed.
enum DomainSignal {
    /// `Changed`; `invalidated` keys were left out of the signal and must be read again.
    case changed(DomainName, changed: [String: PropertyListValue], removed: [String], invalidated: [String])
    case forcedKeys(DomainName, Set<String>)

    /// Parses `Changed` and `ForcedKeysChanged`; `nil` for anything else or a malformed body.
    init?(_ signal: DBusMessage) {
        guard case .string(let name)? = signal.body.first, let domain = try? DomainName(name) else { return nil }
        switch (signal.member, signal.body.count) {
        case (PreferencesBus.changedSignal?, 4):
            guard let changed = try? PropertyListValue.dictionary(dbus: signal.body[1]),
                  case .array(_, let removedValues) = signal.body[2],
                  case .array(_, let invalidatedValues) = signal.body[3] else { return nil }
            self = .changed(
                domain, changed: changed,
                removed: removedValues.compactMap(\.stringValue), invalidated: invalidatedValues.compactMap(\.stringValue)
            )
        case (PreferencesBus.forcedKeysChangedSignal?, 2):
            guard case .array(_, let keyValues) = signal.body[1] else { return nil }
            var keys: Set<String> = []
            for case .string(let key) in keyValues { keys.insert(key) }
            self = .forcedKeys(domain, keys)
        default:
            return nil
        }
    }

    /// The domain the signal is about.
    var domain: DomainName {
        switch self {
        case .changed(let domain, _, _, _), .forcedKeys(let domain, _): domain
        }
    }

    /// The keys whose value may change, given the keys forced before.
    func keys(forcedBefore previous: Set<String>) -> Set<String> {
        switch self {
        case .changed(_, let changed, let removed, _): Set(changed.keys).union(removed)
        case .forcedKeys(_, let keys): keys.union(previous)
        }
    }

    /// Whether the signal left values out (`invalidated`): the domain must be read again.
    var leavesValuesOut: Bool {
        if case .changed(_, _, _, let invalidated) = self { return !invalidated.isEmpty }
        return false
    }

    /// Applies what the signal carries to the cache (see `leavesValuesOut` for the rest).
    func apply(to cache: inout DomainCache) {
        switch self {
        case .changed(let domain, let changed, let removed, _): cache.applyChange(domain, changed: changed, removed: removed)
        case .forcedKeys(let domain, let keys): cache.setForced(domain, keys)
        }
    }
}
