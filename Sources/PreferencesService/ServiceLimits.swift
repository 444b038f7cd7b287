/// The sizes and counts the service refuses to pass, each a `prefsd` flag.
///
/// Sizes are what an entry really costs: its domain name, its key's UTF-8 bytes, its
/// value as D-Bus marshalled bytes, and ``entryOverhead`` for the row, index and memory
/// that hold it; a volatile domain costs ``domainOverhead`` more, even when empty.
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
    /// Number of persistent domains (default 100,000: a `Domains` reply of the longest
    /// names stays under 27 MB, inside every bus's message limit).
    public var domainCount: Int
    /// Keys in one domain, persistent, volatile or managed (default 250,000).
    public var keysPerDomain: Int
    /// Number of volatile domains (default 10,000).
    public var volatileDomainCount: Int
    /// Largest managed (administrator's) property-list file (default 16 MiB).
    public var managedFileBytes: Int
    /// Largest reply or signal the service sends (default 32 MiB, dbus-daemon's built-in
    /// `max_message_size`: a message over the bus's limit gets the sender disconnected).
    /// A larger reply is answered `org.freedesktop.DBus.Error.LimitsExceeded`.
    public var replyBytes: Int
    /// Calls of one sender held while prefsd learns who it is (default 256); more are
    /// refused `org.freedesktop.DBus.Error.LimitsExceeded`.
    public var heldCallsPerSender: Int
    /// Bytes (as marshalled) of the calls of one sender held while prefsd learns who it is
    /// (default 32 MiB); its first call is held whatever its size.
    public var heldBytesPerSender: Int

    /// Calls held while the store loads, from every caller together (default 10,000); more
    /// are answered `org.freedesktop.DBus.Error.LimitsExceeded` at once.
    public var waitingCalls: Int = 10_000
    /// Bytes of the calls held while the store loads, as marshalled on the bus (default
    /// 64 MiB: one `ReplaceDomain` of the largest domain); more are refused like
    /// ``waitingCalls``.
    public var waitingBytes: Int = 64 << 20

    // MARK: Each sandboxed application's share

    /// Set by the `applicationStoreBytes` family; `nil` takes the default share.
    private var applicationOverrides: [ApplicationLimit: Int] = [:]

    /// The limits each sandboxed application (by application ID, over all its connections)
    /// has its own share of.
    enum ApplicationLimit: Hashable, Sendable {
        case storeBytes, domainCount, volatileBytes, volatileDomainCount, subscriptions
    }

    /// The bytes one sandboxed application's persistent domains (its own and its suites)
    /// may take (default: 1/8 of ``storeBytes``, 64 MiB).
    public var applicationStoreBytes: Int {
        get { applicationOverrides[.storeBytes] ?? max(1, storeBytes / 8) }
        set { applicationOverrides[.storeBytes] = newValue }
    }

    /// The persistent domains one sandboxed application may hold (default: 1/100 of
    /// ``domainCount``, 1,000).
    public var applicationDomainCount: Int {
        get { applicationOverrides[.domainCount] ?? max(1, domainCount / 100) }
        set { applicationOverrides[.domainCount] = newValue }
    }

    /// The bytes one sandboxed application's volatile domains may take (default: 1/8 of
    /// ``volatileBytes``, 8 MiB).
    public var applicationVolatileBytes: Int {
        get { applicationOverrides[.volatileBytes] ?? max(1, volatileBytes / 8) }
        set { applicationOverrides[.volatileBytes] = newValue }
    }

    /// The volatile domains one sandboxed application may hold (default: 1/100 of
    /// ``volatileDomainCount``, 100).
    public var applicationVolatileDomainCount: Int {
        get { applicationOverrides[.volatileDomainCount] ?? max(1, volatileDomainCount / 100) }
        set { applicationOverrides[.volatileDomainCount] = newValue }
    }

    /// The domain subscriptions (`Subscribe` on the sandbox door) one sandboxed application
    /// may hold over all its connections (default 1,024: four peers' worth).
    public var applicationSubscriptions: Int {
        get { applicationOverrides[.subscriptions] ?? 1024 }
        set { applicationOverrides[.subscriptions] = newValue }
    }

    /// What one entry costs beyond its names and value: measured on a full store, a row of
    /// SQLite with its index, its WAL frame share, and the dictionary slot, strings and
    /// enum boxes that hold it in memory. See the README's Reliability section.
    public static let entryOverhead = 256
    /// What one domain costs beyond its entries: its name and dictionary in memory.
    public static let domainOverhead = 256

    /// The contract's defaults.
    public static let `default` = ServiceLimits(
        valueBytes: 1 << 20, domainBytes: 64 << 20, storeBytes: 512 << 20, volatileBytes: 64 << 20, nesting: 32
    )

    /// Makes a set of limits.
    public init(
        valueBytes: Int, domainBytes: Int, storeBytes: Int, volatileBytes: Int, nesting: Int,
        domainCount: Int = 100_000, keysPerDomain: Int = 250_000, volatileDomainCount: Int = 10_000,
        managedFileBytes: Int = 16 << 20, replyBytes: Int = 32 << 20,
        heldCallsPerSender: Int = 256, heldBytesPerSender: Int = 32 << 20
    ) {
        self.valueBytes = valueBytes
        self.domainBytes = domainBytes
        self.storeBytes = storeBytes
        self.volatileBytes = volatileBytes
        self.nesting = nesting
        self.domainCount = domainCount
        self.keysPerDomain = keysPerDomain
        self.volatileDomainCount = volatileDomainCount
        self.managedFileBytes = managedFileBytes
        self.replyBytes = replyBytes
        self.heldCallsPerSender = heldCallsPerSender
        self.heldBytesPerSender = heldBytesPerSender
    }

    /// The largest message the service accepts: the protocol's own maximum (128 MiB).
    ///
    /// A message over a connection's limit makes libdbus drop the *receiving* connection
    /// from the bus, so any lower limit would let one client knock prefsd off the bus.
    /// With the protocol's maximum every message the bus delivers is read and refused
    /// with `QuotaExceeded` or `InvalidArgs` instead.
    public var maximumMessageBytes: Int { 128 << 20 }
}
