/// What the change journal costs: a durable `Write` beside the same with no journal, and
/// the journal's size after many changes of one key.
public struct HistoryCost: Sendable, Equatable {
    /// Median seconds of a durable `Write` to a prefsd keeping the journal, and to one with
    /// `--history-entries 0`, sampled taking turns.
    public var withJournal: Double
    public var withoutJournal: Double
    /// Changes of one key made, and what the journal kept after them: entries and bytes as
    /// its bounds count them, beside those bounds.
    public var changes: Int
    public var entries: Int
    public var bytes: Int
    public var entryBound: Int
    public var byteBound: Int
    /// The store's files (database and WAL) after the changes, in bytes.
    public var fileBytes: Int
    /// Median seconds of `prefs history --limit 3` on that journal (the newest entries),
    /// and of the same reading the whole journal (`--since` the epoch).
    public var newestRead: Double
    public var wholeRead: Double
    /// Median seconds of `prefs read` of one key on the same prefsd: the cost of a `prefs`
    /// process and one call, under any history read.
    public var readFloor: Double

    /// The target of a `prefs history --limit 3`, whatever the journal holds.
    public static let newestReadTarget = 0.050

    /// The journal's `Write` target: at most 3 % slower than without it.
    public static let writeTarget = 1.03

    /// Median seconds of a WAL-shaped `fdatasync` of one frame (a one-page commit) in the
    /// stores' directory, sampled in the same rounds as the writes.
    public var oneFrameSync: Double
    /// The same of two frames: a commit with one page more, the least that recording a
    /// change in the same commit adds.
    public var twoFrameSync: Double

    /// Makes the figures.
    public init(
        withJournal: Double, withoutJournal: Double, oneFrameSync: Double, twoFrameSync: Double,
        changes: Int, entries: Int, bytes: Int,
        entryBound: Int, byteBound: Int, fileBytes: Int, newestRead: Double, wholeRead: Double, readFloor: Double
    ) {
        (self.newestRead, self.wholeRead, self.readFloor) = (newestRead, wholeRead, readFloor)
        (self.withJournal, self.withoutJournal, self.changes) = (withJournal, withoutJournal, changes)
        (self.oneFrameSync, self.twoFrameSync) = (oneFrameSync, twoFrameSync)
        (self.entries, self.bytes, self.entryBound, self.byteBound, self.fileBytes) = (entries, bytes, entryBound, byteBound, fileBytes)
    }

    /// The `Write` p50 with the journal over the p50 without it.
    public var writeRatio: Double { withoutJournal > 0 ? withJournal / withoutJournal : .infinity }
    /// The floor of ``writeRatio``: the `Write` without the journal plus what one more WAL
    /// page adds to its sync, over the `Write` without the journal.
    public var floorRatio: Double {
        withoutJournal > 0 ? (withoutJournal + twoFrameSync - oneFrameSync) / withoutJournal : .infinity
    }
    /// Whether the ratio is within ``writeTarget``.
    public var writeMet: Bool { writeRatio <= Self.writeTarget }
    /// Whether the journal stayed within both its bounds.
    public var boundMet: Bool { entries <= entryBound && bytes <= byteBound }

    /// The report's rows: what, figure, target, met or missed.
    public var rows: [[String]] {
        [
            [
                "durable `Write` p50, journal beside none (`--history-entries 0`), taking turns",
                "\(Format.duration(withJournal)) vs \(Format.duration(withoutJournal)): \(Format.ratio(writeRatio))",
                "≤ \(Format.ratio(Self.writeTarget))", writeMet ? "met" : "**missed**",
            ],
            [
                "the floor: that `Write` without the journal, plus one WAL page more in its sync (`fdatasync` of two frames − of one, same rounds)",
                "\(Format.duration(twoFrameSync)) − \(Format.duration(oneFrameSync)): \(Format.ratio(floorRatio))",
                "– (context)", "–",
            ],
            [
                "journal after \(changes) changes of one key",
                "\(entries) entries, \(bytes) bytes counted (store files \(fileBytes) bytes)",
                "≤ \(entryBound) entries, ≤ \(byteBound) bytes", boundMet ? "met" : "**missed**",
            ],
            [
                "`prefs history --limit 3` (whole process) on that journal; reading all of it instead; the floor, `prefs read` of one key",
                "\(Format.duration(newestRead)); \(Format.duration(wholeRead)); \(Format.duration(readFloor))",
                "≤ \(Format.duration(Self.newestReadTarget))", newestRead <= Self.newestReadTarget ? "met" : "**missed**",
            ],
        ]
    }
}
