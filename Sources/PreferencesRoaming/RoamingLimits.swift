/// The bounds a roaming file must keep. A file from another machine that passes one is set
/// aside whole; this machine's own file is compacted to stay inside them.
public struct RoamingLimits: Sendable, Equatable {
    /// The largest file, in bytes (`prefsd --max-roaming-file-size`, 16 MiB).
    public var fileBytes: Int
    /// The most entries in one file (100,000).
    public var entries: Int
    /// How far ahead of this machine's clock a time in a file may lie, in milliseconds
    /// (30 days): a file with a later time is set aside, so one machine with a wrong clock
    /// (or a hostile file) cannot push every clock years ahead.
    public var futureSkewMilliseconds: UInt64
    /// How long a removal (tombstone) is kept in this machine's file, in milliseconds
    /// (90 days): a machine that has been away longer may bring a removed key back.
    public var tombstoneMilliseconds: UInt64
    /// The most other machines' files read (64).
    public var machines: Int
    /// The most copies of set-aside files kept in `roaming.local/set-aside/` (8): the
    /// oldest are dropped to make room for a new one.
    public var setAsideCopies: Int
    /// The most bytes those copies take together: twice ``fileBytes`` (32 MiB), so the
    /// latest bad file always has room for its copy.
    public var setAsideBytes: Int { 2 * fileBytes }

    /// Makes limits.
    public init(
        fileBytes: Int = 16 << 20, entries: Int = 100_000, futureSkewMilliseconds: UInt64 = 30 * 86_400_000,
        tombstoneMilliseconds: UInt64 = 90 * 86_400_000, machines: Int = 64, setAsideCopies: Int = 8
    ) {
        self.fileBytes = fileBytes
        self.entries = entries
        self.futureSkewMilliseconds = futureSkewMilliseconds
        self.tombstoneMilliseconds = tombstoneMilliseconds
        self.machines = machines
        self.setAsideCopies = setAsideCopies
    }

    /// The defaults.
    public static let `default` = RoamingLimits()
}
