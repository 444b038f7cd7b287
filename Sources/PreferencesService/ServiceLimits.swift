/// The sizes the service refuses to pass, each a `prefsd` flag.
///
/// Sizes are measured as D-Bus marshalled bytes: a value as its `v` argument, an entry as
/// its key's UTF-8 bytes plus its value.
public struct ServiceLimits: Sendable, Hashable {
    /// One value (default 1 MiB).
    public var valueBytes: Int
    /// One persistent domain (default 64 MiB).
    public var domainBytes: Int
    /// The whole persistent store (default 512 MiB).
    public var storeBytes: Int
    /// All volatile domains together (default 64 MiB).
    public var volatileBytes: Int
    /// Nesting of arrays and dictionaries in a value (default 32).
    public var nesting: Int

    /// The contract's defaults.
    public static let `default` = ServiceLimits(
        valueBytes: 1 << 20, domainBytes: 64 << 20, storeBytes: 512 << 20, volatileBytes: 64 << 20, nesting: 32
    )

    /// Makes a set of limits.
    public init(valueBytes: Int, domainBytes: Int, storeBytes: Int, volatileBytes: Int, nesting: Int) {
        self.valueBytes = valueBytes
        self.domainBytes = domainBytes
        self.storeBytes = storeBytes
        self.volatileBytes = volatileBytes
        self.nesting = nesting
    }

    /// The largest message the service accepts: the protocol's own maximum (128 MiB).
    ///
    /// A message over a connection's limit makes libdbus drop the *receiving* connection
    /// from the bus, so any lower limit would let one client knock prefsd off the bus.
    /// With the protocol's maximum every message the bus delivers is read and refused
    /// with `QuotaExceeded` or `InvalidArgs` instead.
    public var maximumMessageBytes: Int { 128 << 20 }
}
