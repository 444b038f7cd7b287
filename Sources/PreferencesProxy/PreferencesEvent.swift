import PreferencesModel

/// What a subscriber of ``PreferencesProxy`` is told, in the order prefsd committed it.
public enum PreferencesEvent: Sendable, Hashable {
    /// A persistent domain changed (`Changed`); its invalidated keys are re-read unless
    /// the subscription asked for raw signals.
    case changed(DomainChange)
    /// A volatile domain changed (`VolatileChanged`); its invalidated keys are re-read
    /// unless the subscription asked for raw signals.
    case volatileChanged(DomainChange)
    /// The keys an administrator forces in `domain` are now `keys` (`ForcedKeysChanged`);
    /// `serial` is the signal's, as in ``DomainChange/serial``.
    case forcedKeysChanged(domain: String, keys: [String], serial: UInt32)
    /// The proxy could not re-read what a signal left out (`reason` says why): values of
    /// `domain` (every domain when `nil`) seen so far may be stale; load them again.
    case reloadNeeded(domain: String?, reason: String)
    /// Another process now owns prefsd's bus name (`nil`: none), for instance because
    /// prefsd exited or was started again: every cached value, and every volatile domain,
    /// may be gone; load again.
    case ownerChanged(previous: String?, current: String?)
    /// The connection to the bus was lost; no further event comes.
    case disconnected

    /// The domain the event is about, when it is about one.
    public var domain: String? {
        switch self {
        case .changed(let change), .volatileChanged(let change): change.domain
        case .forcedKeysChanged(let domain, _, _): domain
        case .reloadNeeded(let domain, _): domain
        case .ownerChanged, .disconnected: nil
        }
    }
}

/// One committed change of a domain, complete: every key whose value changed with its new
/// value, and every key removed.
public struct DomainChange: Sendable, Hashable {
    /// The domain.
    public var domain: String
    /// The keys whose value changed, with their new values.
    public var changed: [String: PropertyListValue]
    /// The keys removed.
    public var removed: [String]
    /// The keys prefsd left out of the signal to keep it small (`[""]`: even their names).
    /// In a change the proxy resolved, they have been re-read: their values are in
    /// `changed` and `removed`.
    public var invalidated: [String]
    /// True when the service left out even the names of the changed keys (`invalidated`
    /// was `[""]`): `changed` then holds the whole domain as it was re-read, and every key
    /// not in it is gone.
    public var isWholeDomain: Bool
    /// The serial of the signal: later than the serial of any answer prefsd sent before it.
    public var serial: UInt32

    /// A change.
    public init(
        domain: String, changed: [String: PropertyListValue], removed: [String], invalidated: [String] = [],
        isWholeDomain: Bool = false, serial: UInt32 = 0
    ) {
        self.domain = domain
        self.changed = changed
        self.removed = removed
        self.invalidated = invalidated
        self.isWholeDomain = isWholeDomain
        self.serial = serial
    }
}
