import DBus
import Dispatch
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import Synchronization

extension BusSession {
    /// Makes sure the domains are in the cache: for each one not loaded yet, subscribes to
    /// its signals on the proxy and reads it and its forced keys, every call of every
    /// domain sent before any answer is awaited (one round trip for all of them). Waits for
    /// domains another thread is loading. When prefsd cannot be reached the domains stay unloaded, and reads fall
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
                    state.lastWatch += 1
                    let loading = Loading(watch: state.lastWatch)
                    loading.done.enter()
                    state.loading[domain] = loading
                    mine.append(domain)
                }
            }
            return allLoaded
        }
        if mine.isEmpty && others.isEmpty { return allLoaded }
        let started = mine.map { startLoad($0, refreshing: false) }
        for load in started { finishLoad(load) }
        for group in others { _ = group.wait(timeout: .now() + .seconds(30)) }
        return state.withLock { state in domains.allSatisfy { state.cache.isLoaded($0) } }
    }

    /// Reads a loaded domain again in the background, because the proxy could not re-read
    /// what a signal left out: its events wait meanwhile, and the objects that search it
    /// are told what changed once it is read.
    func refresh(_ domain: DomainName) {
        let start = state.withLock { state -> Bool in
            guard state.cache.isLoaded(domain), state.loading[domain] == nil, let watch = state.watches[domain] else { return false }
            let loading = Loading(watch: watch.identifier)
            loading.done.enter()
            state.loading[domain] = loading
            return true
        }
        guard start else { return }
        DispatchQueue.global().async { [self] in finishLoad(startLoad(domain, refreshing: true)) }
    }

    /// A load on its way: the domain's subscription (none when refreshing) and its reads,
    /// sent and not awaited yet.
    private struct StartedLoad {
        let domain: DomainName
        let identifier: UInt64?
        let refreshing: Bool
        let subscription: PreferencesSubscription?
        let read: PendingRead?
    }

    /// Sends what loading a domain takes without waiting for any answer: its subscription
    /// (unless `refreshing` a loaded one), then `ForcedKeys` and `ReadDomain`. The bus
    /// handles one connection's calls in order, so the reads are answered after the
    /// subscription is in force.
    private func startLoad(_ domain: DomainName, refreshing: Bool) -> StartedLoad {
        let identifier = state.withLock { $0.loading[domain]?.watch }
        guard let identifier, let proxy = try? proxy() else {
            return StartedLoad(domain: domain, identifier: identifier, refreshing: refreshing, subscription: nil, read: nil)
        }
        var subscription: PreferencesSubscription?
        if !refreshing {
            subscription = try? proxy.startObserving([domain.rawValue]) { [weak self] event in
                self?.receive(event, in: domain, watch: identifier)
            }
            if subscription == nil {
                return StartedLoad(domain: domain, identifier: identifier, refreshing: refreshing, subscription: nil, read: nil)
            }
        }
        return StartedLoad(domain: domain, identifier: identifier, refreshing: refreshing, subscription: subscription,
                           read: PendingRead(domain, on: proxy))
    }

    /// Waits for a started load's answers and puts the domain in the cache (or, not read,
    /// leaves it unloaded); ends the domain's `loading`.
    private func finishLoad(_ started: StartedLoad) {
        guard let identifier = started.identifier else { return }
        let domain = started.domain, refreshing = started.refreshing
        var subscription = started.subscription
        var answer = try? started.read?.snapshot()
        // Its calls were answered before the reads: this returns at once, or says it failed.
        if answer != nil, let pending = subscription {
            do throws(PreferencesProxyError) { try pending.confirmBlocking() } catch { answer = nil }
        }
        if answer == nil, !refreshing, let pending = subscription {
            pending.cancel()
            subscription = nil
        }
        // One critical section from "loading" to "loaded": an event arriving meanwhile is
        // either buffered here or applied after, never dropped or applied out of order.
        let (loading, ended, again) = mutateState(domain: domain, notify: refreshing) { state -> (Loading?, PreferencesSubscription?, Bool) in
            let loading = state.loading.removeValue(forKey: domain)
            state.retryAfter[domain] = answer == nil ? .now + .seconds(1) : nil
            guard let answer, loading?.stale != true else {
                // Not read, or read from a prefsd that has gone since.
                state.cache.unload(domain)
                return (loading, state.watches.removeValue(forKey: domain)?.subscription ?? subscription, false)
            }
            state.cache.load(domain, values: answer.values, forced: answer.forced)
            if let subscription {
                state.watches[domain] = Watch(identifier: identifier, subscription: subscription, serial: answer.serial)
            } else {
                state.watches[domain]?.serial = answer.serial
            }
            // Events of signals sent after the service read the domain for us still apply;
            // those sent before are in what it answered.
            var again = false
            for event in loading?.buffered ?? [] {
                again = Self.apply(event, to: &state, domain) || again
            }
            return (loading, nil, again)
        }
        ended?.cancel()
        loading?.done.leave()
        if again { refresh(domain) }
    }

    /// What the service answered for a domain, and the serial of its first answer: signals
    /// with a higher serial were sent after it.
    struct Snapshot {
        var values: [String: PropertyListValue]
        var forced: Set<String>
        var serial: UInt32
    }

    /// `ForcedKeys` and `ReadDomain` of one domain, sent together, and their answers.
    final class PendingRead: Sendable {
        private typealias Answer<Value> = Result<(value: Value, serial: UInt32), PreferencesProxyError>
        private let answers = Mutex<(forced: Answer<[String]>?, values: Answer<[String: PropertyListValue]>?)>((nil, nil))
        private let done = DispatchSemaphore(value: 0)

        /// Sends both calls; neither is awaited here.
        init(_ domain: DomainName, on proxy: PreferencesProxy) {
            proxy.answer(PreferencesCall.forcedKeys(domain.rawValue), timeout: BusSession.callTimeout) { [self] result in
                if answers.withLock({ $0.forced = result; return $0.values != nil }) { done.signal() }
            }
            proxy.answer(PreferencesCall.readDomain(domain.rawValue), timeout: BusSession.callTimeout) { [self] result in
                if answers.withLock({ $0.values = result; return $0.forced != nil }) { done.signal() }
            }
        }

        /// Blocks until both answered (each call has its time-out); a domain that does not
        /// exist reads as empty.
        func snapshot() throws(PreferencesError) -> Snapshot {
            done.wait()
            let (forcedAnswer, valuesAnswer) = answers.withLock { ($0.forced, $0.values) }
            guard let forcedAnswer, let valuesAnswer else { throw .serviceUnavailable("prefsd did not answer") }
            let forced: (value: [String], serial: UInt32)
            do throws(PreferencesProxyError) { forced = try forcedAnswer.get() } catch { throw PreferencesError(error) }
            // Signals sent after the first answer are applied on top of both answers: a
            // ForcedKeysChanged between the two is not in the forced keys, and applying a
            // Changed that ReadDomain already shows again changes nothing.
            switch valuesAnswer {
            case .success(let values):
                return Snapshot(values: values.value, forced: Set(forced.value), serial: min(forced.serial, values.serial))
            case .failure(.notFound):
                return Snapshot(values: [:], forced: Set(forced.value), serial: forced.serial)
            case .failure(let error):
                throw PreferencesError(error)
            }
        }
    }

    // MARK: Events

    /// Takes an event of a domain's subscription (on the proxy's delivery queue, in the
    /// order prefsd sent them, invalidated values re-read): applies it to the loaded domain,
    /// keeps it while the domain is being read, ignores it when the subscription is not
    /// the domain's any more. prefsd's restarts and the end of the connection come through
    /// the session's own subscription.
    private func receive(_ event: PreferencesEvent, in domain: DomainName, watch identifier: UInt64) {
        switch event {
        case .changed, .forcedKeysChanged, .reloadNeeded: break
        case .volatileChanged, .ownerChanged, .disconnected: return
        }
        let keys = state.withLock { state -> Set<String>?? in
            // A domain being read (again) holds its events back until the answer is in.
            if state.loading[domain]?.watch == identifier {
                state.loading[domain]?.buffered.append(event)
                return .none
            }
            guard state.watches[domain]?.identifier == identifier, state.cache.isLoaded(domain) else { return .none }
            return .some(Self.keys(of: event, forcedBefore: state.cache.domains[domain]?.forced ?? []))
        }
        // Events of a loaded domain are only applied here, on the proxy's queue, so the
        // domain is still loaded with this subscription when the change is made.
        guard case .some(let affected) = keys else { return }
        let again = mutateState(domain: domain, keys: affected) { Self.apply(event, to: &$0, domain) }
        if again { refresh(domain) }
    }

    /// The keys whose value an event may change (`nil`: any key of the domain).
    private static func keys(of event: PreferencesEvent, forcedBefore previous: Set<String>) -> Set<String>? {
        switch event {
        case .changed(let change): change.isWholeDomain ? nil : Set(change.changed.keys).union(change.removed)
        case .forcedKeysChanged(_, let keys, _): Set(keys).union(previous)
        default: []
        }
    }

    /// Applies an event to a loaded domain unless the answer it was loaded from is newer.
    /// - Returns: whether the domain must be read again (the proxy could not re-read
    ///   what a signal left out).
    private static func apply(_ event: PreferencesEvent, to state: inout State, _ domain: DomainName) -> Bool {
        let loadedFrom = state.watches[domain]?.serial ?? 0
        switch event {
        case .changed(let change) where change.serial > loadedFrom:
            var removed = change.removed
            if change.isWholeDomain {
                removed = (state.cache.domains[domain]?.values.keys).map { Array($0.filter { change.changed[$0] == nil }) } ?? []
            }
            state.cache.applyChange(domain, changed: change.changed, removed: removed)
        case .forcedKeysChanged(_, let keys, let serial) where serial > loadedFrom:
            state.cache.setForced(domain, Set(keys))
        case .reloadNeeded:
            return true
        default:
            break
        }
        return false
    }
}
