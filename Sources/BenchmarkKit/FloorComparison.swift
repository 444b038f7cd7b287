/// What one service took for the GDBus reference client's calls: `Read` beside `Peer.Ping`
/// (the read batches), durable `Write` beside `Peer.Ping` and the disk's 4 KiB `fdatasync`
/// (the write batches).
public struct ServiceTimes: Sendable, Equatable {
    /// `Peer.Ping` in the read batches.
    public var readPing: Figure
    /// `Read` in the read batches.
    public var read: Figure
    /// `Peer.Ping` in the write batches.
    public var writePing: Figure
    /// `Write` in the write batches.
    public var write: Figure
    /// 4 KiB over one block and `fdatasync`, in the write batches (by the client, in the
    /// store's directory).
    public var sync: Figure

    /// The figures as measured.
    public init(readPing: Figure, read: Figure, writePing: Figure, write: Figure, sync: Figure) {
        self.readPing = readPing
        self.read = read
        self.writePing = writePing
        self.write = write
        self.sync = sync
    }

    /// Every figure missing for `reason`.
    public static func missing(_ reason: String) -> ServiceTimes {
        let figure = Figure.missing(reason)
        return ServiceTimes(readPing: figure, read: figure, writePing: figure, write: figure, sync: figure)
    }

    /// `Read` p50 / `Peer.Ping` p50.
    public var readOverPing: Double? {
        guard let read = read.summary, let ping = readPing.summary else { return nil }
        return read.median / ping.median
    }

    /// `Read` p50 − `Peer.Ping` p50, in seconds: what answering a `Read` costs beyond the bus.
    public var readMinusPing: Double? {
        guard let read = read.summary, let ping = readPing.summary else { return nil }
        return read.median - ping.median
    }

    /// The issue's floor for a durable write: `Peer.Ping` p50 + `fdatasync` p50.
    public var writeFloor: Double? {
        guard let ping = writePing.summary, let sync = sync.summary else { return nil }
        return ping.median + sync.median
    }

    /// `Write` p50 / (`Peer.Ping` p50 + `fdatasync` p50).
    public var writeOverFloor: Double? {
        guard let write = write.summary, let floor = writeFloor else { return nil }
        return write.median / floor
    }

    /// `Write` p50 − (`Peer.Ping` p50 + `fdatasync` p50), in seconds.
    public var writeMinusFloor: Double? {
        guard let write = write.summary, let floor = writeFloor else { return nil }
        return write.median - floor
    }
}

/// prefsd beside the floor service (``FloorService``) and, for durable writes, the store floor
/// (``StoreFloorService``), all timed by the GDBus reference client call by call in the same
/// rounds, and the report's rows for them. prefsd's rows carry the issue's targets (GDBus
/// `Read`/Ping ≤ 1.0, durable `Write` ≤ 1.3 × (Ping + fdatasync)); the floor's rows have none:
/// they show what a service on libdbus reaches with this client. The store floor's row
/// carries the target of what prefsd's durable `Write` adds over a floor of its own kind: at
/// most ``storeFloorAllowance`` more than the store floor's over (Ping + fdatasync).
public struct FloorComparison: Sendable, Equatable {
    /// prefsd's figures.
    public var prefsd: ServiceTimes
    /// The floor service's figures.
    public var floor: ServiceTimes
    /// The store floor's figures (its `Write` rows only; it is not read).
    public var storeFloor: ServiceTimes
    /// Read rounds per batch (a batch is one line of the client's output).
    public var readBatch: Int
    /// Write rounds per batch.
    public var writeBatch: Int

    /// The most prefsd's durable `Write` − (Ping + fdatasync) may pass the store floor's by: the
    /// issue's allowance over the floor (60 µs).
    public static let storeFloorAllowance = 60e-6

    /// The figures as measured, in batches of `readBatch` rounds of Ping+Read and `writeBatch`
    /// rounds of Ping+Write+sync, each round calling every service.
    public init(prefsd: ServiceTimes, floor: ServiceTimes, storeFloor: ServiceTimes, readBatch: Int, writeBatch: Int) {
        self.prefsd = prefsd
        self.floor = floor
        self.storeFloor = storeFloor
        self.readBatch = readBatch
        self.writeBatch = writeBatch
    }

    /// Nothing measured, for `reason`.
    public static func missing(_ reason: String) -> FloorComparison {
        FloorComparison(prefsd: .missing(reason), floor: .missing(reason), storeFloor: .missing(reason), readBatch: 0, writeBatch: 0)
    }

    /// The two `Read` rows, in the report's columns (figure, p50 / p99, anchor, anchor p50 /
    /// p99, ratio, target, result).
    public var readRows: [[String]] {
        [
            [
                "`Read` through GDBus (C, gio-2.0), prefsd", prefsd.read.countedText,
                "`Peer.Ping` to prefsd through GDBus", prefsd.readPing.text,
                prefsd.readOverPing.map { "Read/Ping \(Format.ratio($0))" } ?? "–",
                "≤ 1.0×", Self.verdict(prefsd.readOverPing.map { $0 <= 1.0 }),
            ],
            [
                "`Read` through GDBus, minimal libdbus service (C, one thread, fixed answer): the floor",
                floor.read.countedText, "`Peer.Ping` to that service through GDBus, same rounds", floor.readPing.text,
                Self.beside(
                    floor.readOverPing.map { "Read/Ping \(Format.ratio($0))" }, prefsd.readOverPing.map(Format.ratio),
                    floor.readMinusPing.map { "Read − Ping \(Self.signed($0))" }, prefsd.readMinusPing.map(Self.signed)),
                "– (context)", "–",
            ],
        ]
    }

    /// What prefsd's durable `Write` − (Ping + fdatasync) passes the store floor's by, in seconds.
    public var writeOverStoreFloor: Double? {
        guard let prefsd = prefsd.writeMinusFloor, let store = storeFloor.writeMinusFloor else { return nil }
        return prefsd - store
    }

    /// The three durable `Write` rows, in the report's columns.
    public var writeRows: [[String]] {
        [
            [
                "durable `Write` through GDBus (C, gio-2.0), prefsd", prefsd.write.countedText,
                "`Peer.Ping` to prefsd through GDBus + `fdatasync` of 4 KiB in the store's directory (p50s)",
                Self.floorText(prefsd), prefsd.writeOverFloor.map { "Write/floor \(Format.ratio($0))" } ?? "–",
                "≤ 1.3×", Self.verdict(prefsd.writeOverFloor.map { $0 <= 1.3 }),
            ],
            [
                "durable `Write` through GDBus, minimal libdbus service (pwrite of a WAL frame + fdatasync + `Changed` + reply): the floor",
                floor.write.countedText,
                "`Peer.Ping` to that service through GDBus + `fdatasync` of 4 KiB, same rounds (p50s)", Self.floorText(floor),
                Self.beside(
                    floor.writeOverFloor.map { "Write/floor \(Format.ratio($0))" }, prefsd.writeOverFloor.map(Format.ratio),
                    floor.writeMinusFloor.map { "Write − floor \(Self.signed($0))" }, prefsd.writeMinusFloor.map(Self.signed)),
                "– (context)", "–",
            ],
            [
                "durable `Write` through GDBus, minimal libdbus + SQLite service (C: prefsd's tables, statements and pragmas; "
                    + "calls polled on one thread, each `Write` committed on a writer thread, then `Changed` + reply): the store floor",
                storeFloor.write.countedText,
                "`Peer.Ping` to that service through GDBus + `fdatasync` of 4 KiB, same rounds (p50s)", Self.floorText(storeFloor),
                Self.beside(
                    storeFloor.writeOverFloor.map { "Write/floor \(Format.ratio($0))" }, prefsd.writeOverFloor.map(Format.ratio),
                    storeFloor.writeMinusFloor.map { "Write − floor \(Self.signed($0))" }, prefsd.writeMinusFloor.map(Self.signed))
                    + (writeOverStoreFloor.map { "; prefsd's over this one's \(Self.signed($0))" } ?? ""),
                "prefsd ≤ this + \(Format.duration(Self.storeFloorAllowance))",
                Self.verdict(writeOverStoreFloor.map { $0 <= Self.storeFloorAllowance }),
            ],
        ]
    }

    /// The note under the table: how the rows were measured.
    public var note: String {
        "Floor rows: the GDBus reference client times prefsd and a minimal libdbus service in C (`\(FloorService.busName)` on the same bus: one thread, "
            + "`Read` answers a fixed value without a lookup, `Write` is a WAL-shaped pwrite + fdatasync in the store's directory, the `Changed` signal and the reply; no argument checks, "
            + "no access control, no store) call by call: each round pings and calls prefsd, then the floor (every other round the floor first), "
            + "in batches of \(readBatch) Ping+Read rounds and \(writeBatch) Ping+Write+fdatasync rounds. "
            + "The floor has no target: it is what a service on libdbus reaches with this client, so prefsd's ratios can be read against it as well as against Ping. "
            + "The store floor (`\(StoreFloorService.busName)`, in the write rounds) keeps what it is written in SQLite as prefsd's store does and has prefsd's threads "
            + "(a `Read` is never held up by a commit): what libdbus and SQLite cost a durable `Write` of prefsd's kind on this machine; prefsd's target is to add at most "
            + "\(Format.duration(Self.storeFloorAllowance)) over it."
    }

    /// "floor text (prefsd X); second (prefsd Y)", or "–" when the floor's is missing.
    private static func beside(_ first: String?, _ prefsdFirst: String?, _ second: String?, _ prefsdSecond: String?) -> String {
        guard let first else { return "–" }
        var text = first + " (prefsd \(prefsdFirst ?? "–"))"
        if let second { text += "; \(second) (prefsd \(prefsdSecond ?? "–"))" }
        return text
    }

    /// "Ping p50 + sync p50 = floor", or "–".
    private static func floorText(_ times: ServiceTimes) -> String {
        guard let ping = times.writePing.summary, let sync = times.sync.summary, let floor = times.writeFloor else { return "–" }
        return "\(Format.duration(ping.median)) + \(Format.duration(sync.median)) = \(Format.duration(floor))"
    }

    /// A duration with its sign: "+12.0 µs", "−3.00 µs".
    static func signed(_ seconds: Double) -> String {
        (seconds < 0 ? "−" : "+") + Format.duration(abs(seconds))
    }

    private static func verdict(_ met: Bool?) -> String {
        met.map { $0 ? "met" : "**missed**" } ?? "–"
    }
}
