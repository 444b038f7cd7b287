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

    /// The largest message the service accepts: well above the value limit (at least
    /// 4 MiB, four values' worth), so that an oversized value gets `QuotaExceeded` instead
    /// of libdbus dropping the sender's connection.
    public var maximumMessageBytes: Int {
        max(8 << 20, valueBytes.multipliedReportingOverflow(by: 4).overflow ? Int(Int32.max) : valueBytes * 4)
    }
}
