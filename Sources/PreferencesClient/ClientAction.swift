/// What the engine asks of its adapter, in order: calls to send and news to tell. The
/// adapter drains them with ``ClientEngine/takeActions()`` after each event it feeds in.
public enum ClientAction<Value>: Sendable where Value: Sendable {
    /// Start receiving prefsd's signals about the domain (`AddMatch` of its rule, or
    /// `Subscribe` at the sandbox door). Comes once per domain, right before its first
    /// ``load(_:token:)``: the two may go out together, so the first load is one round trip.
    case subscribe(ClientDomain)
    /// Stop receiving them (the domain was forgotten).
    case unsubscribe(ClientDomain)
    /// Read the domain whole (`ReadDomain` with `ForcedKeys` sent at once for a persistent
    /// domain, `ReadVolatileDomain` for a volatile one) and answer each call, as it comes,
    /// with ``ClientEngine/domainRead(_:token:values:serial:sender:)``,
    /// ``ClientEngine/forcedKeysRead(_:token:keys:serial:)`` or
    /// ``ClientEngine/loadCallFailed(_:token:part:failure:reason:sender:)`` quoting `token`: the
    /// engine pairs them.
    case load(ClientDomain, token: UInt64)
    /// A lane has writes queued and none in flight: call ``ClientEngine/flush(_:)`` now,
    /// at the next idle, or after an interval (the longer the wait, the more a burst
    /// coalesces into one call).
    case flushNeeded(ClientDomain)
    /// Send `Apply(domain, set, remove)` (`Write`/`Remove` may stand in for one key) and
    /// answer with ``ClientEngine/writeAnswered(_:token:serial:sender:)`` or
    /// ``ClientEngine/writeFailed(_:token:failure:reason:)``.
    case apply(ClientDomain, set: [String: Value], remove: [String], token: UInt64)
    /// Replace the whole domain (`ReplaceDomain`/`SetVolatileDomain`), or remove it when
    /// `values` is `nil` (`RemoveDomain`/`RemoveVolatileDomain`); answer as for ``apply(_:set:remove:token:)``.
    case replace(ClientDomain, values: [String: Value]?, token: UInt64)
    /// The first load of the domain ended: loaded, or not (``ClientDomainPhase/unavailable``).
    /// Whoever waits for the domain may go on.
    case loadFinished(ClientDomain, loaded: Bool)
    /// The values readers see changed for these keys. `byWrite`: this process's own write
    /// (or reset) made them, just now; every key written is listed, changed or not.
    case changed(ClientDomain, keys: [String], byWrite: Bool)
    /// Whether these keys are forced (so not writable) changed.
    case forcedChanged(ClientDomain, keys: [String])
    /// A write of these keys was refused or failed: they read as before it.
    case writeFailed(ClientDomain, keys: [String], reason: String)
    /// The writes with these tickets (from ``ClientEngine/submit(_:in:)`` or
    /// ``ClientEngine/submitReplace(_:with:)``) ended: stored
    /// (`failure` is `nil`) or refused or failed, for the reason given. Comes after the
    /// news of what readers now see. A write of several keys whose batch was sent again key
    /// by key is told once for each of its keys.
    case writeEnded(ClientDomain, tickets: [UInt64], failure: String?)
    /// No write of this process is queued or in flight any more.
    case writesSettled
}

/// One of the calls of a domain's load (``ClientAction/load(_:token:)``).
public enum ClientLoadPart: Sendable {
    /// `ReadDomain` (`ReadVolatileDomain` for a volatile domain).
    case values
    /// `ForcedKeys` (a persistent domain's only).
    case forcedKeys
}
