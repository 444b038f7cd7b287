import PreferencesModel
import Synchronization
import Xfconf

/// What prefsd keeps for xfconf's protocol (`prefsd --xfconf`) beside the store's values:
/// the GVariant type each property of a channel was last given (the store's
/// `gvariant_type`, the table dconf's keys use too), so that a value is given back with the
/// type it was written with.
///
/// The types are read from the store on first use (the first xfconf call, or the first change
/// to a channel), not at start: a prefsd whose xfconf clients never call pays nothing.
final class XfconfFront: Sendable {
    private struct State: Sendable {
        /// The types, once read from the store.
        var types: [DomainName: [String: String]]?
        /// Types set or forgotten before the store's were read (`nil`: forgotten): laid over
        /// them once read, being newer.
        var early: [DomainName: [String: String?]] = [:]
    }

    private let state = Mutex(State())

    /// Reads the types from the store with `load` unless that was done; `load` runs outside
    /// the lock.
    func start(_ load: () -> [DomainName: [String: String]]) {
        if state.withLock({ $0.types != nil }) { return }
        let loaded = load().filter { XfconfChannel.isChannelDomain($0.key.rawValue) }
        state.withLock { state in
            guard state.types == nil else { return }
            var types = loaded
            for (domain, keys) in state.early {
                for (key, type) in keys { types[domain, default: [:]][key] = type }
                if types[domain]?.isEmpty == true { types[domain] = nil }
            }
            state.types = types
            state.early = [:]
        }
    }

    /// The GVariant type `key` of `domain` was last given through xfconf, if any.
    func type(domain: DomainName, key: String) -> String? {
        state.withLock { state in
            if let early = state.early[domain]?[key] { return early }
            return state.types?[domain]?[key]
        }
    }

    /// The types of the keys of `domain`.
    func types(domain: DomainName) -> [String: String] {
        state.withLock { state in
            var types = state.types?[domain] ?? [:]
            for (key, type) in state.early[domain] ?? [:] { types[key] = type }
            return types
        }
    }

    /// Records the type `key` of `domain` is given (`nil`: forgotten).
    func setType(_ type: String?, domain: DomainName, key: String) {
        state.withLock { state in
            guard state.types != nil else {
                state.early[domain, default: [:]][key] = .some(type)
                return
            }
            state.types![domain, default: [:]][key] = type
            if state.types![domain]?.isEmpty == true { state.types![domain] = nil }
        }
    }
}
