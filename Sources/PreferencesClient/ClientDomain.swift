/// A domain the engine follows: its name, and which of prefsd's two namespaces it is in
/// (persistent domains, read with `ReadDomain` and changed with `Apply`; volatile domains,
/// read with `ReadVolatileDomain` and replaced whole with `SetVolatileDomain`).
public struct ClientDomain: Hashable, Sendable {
    /// The domain's name.
    public var name: String
    /// Whether it is a volatile domain (no forced keys, whole-domain writes only).
    public var isVolatile: Bool

    /// The persistent domain `name`, or the volatile one.
    public init(_ name: String, volatile: Bool = false) {
        self.name = name
        isVolatile = volatile
    }
}

/// Where a domain's load stands.
public enum ClientDomainPhase: Sendable, Equatable {
    /// Not followed by the engine.
    case unknown
    /// The first load is on its way: nothing of the domain is known yet.
    case loading
    /// Loaded: reads answer from the cache (a reload may be on its way meanwhile).
    case loaded
    /// The first load failed (prefsd could not be reached or refused): nothing is known.
    case unavailable
}
