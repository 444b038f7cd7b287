import BenchmarkKit
import DBus
import PreferencesProtocol

/// One row of the size sweep.
struct SizeResult {
    var keys: Int
    var ping: Figure
    var read: Figure
    var write: WriteFigures
    var dconfWrite: Figure
    var dconfKeys: Int?
}

/// The big domain the sweep fills; all its keys sit in this ONE domain.
let bigDomain = "bench.big"

/// Adds keys `k<from>`…`k<to-1>` to prefsd's big domain with `Apply` batches of 5,000.
func fillPrefsd(_ connection: DBusConnection, from: Int, to: Int) throws {
    var start = from
    while start < to {
        let end = min(start + 5000, to)
        _ = try connection.callBlocking(Calls.apply(bigDomain, keys: start..<end), timeout: .seconds(300))
        start = end
    }
}

/// Adds keys `/bench/k<from>`… to dconf, `chunk` keys per changeset, until done or `deadline`;
/// returns how many keys dconf holds.
func fillDconf(_ connection: DBusConnection, from: Int, to: Int, chunk: Int, deadline: Double) throws -> Int {
    var start = from
    while start < to {
        if now() > deadline { return start }
        let end = min(start + chunk, to)
        _ = try connection.callBlocking(
            Calls.dconfChange((start..<end).map { ("/bench/k\($0)", .int32(Int32($0))) }), timeout: .seconds(600))
        start = end
    }
    return start
}

/// `Read` of one key of the big domain interleaved with `Peer.Ping` to prefsd: lane 0 is
/// Ping, lane 1 is Read.
func measureReads(_ connection: DBusConnection, budget: Budget) throws -> (ping: Figure, read: Figure) {
    let ping = Calls.ping(PreferencesBus.busName)
    let read = Calls.read(bigDomain, "probe")
    // Warm up.
    for _ in 0..<50 { _ = try connection.timed(ping); _ = try connection.timed(read) }
    let lanes = try sample(budget, 2) { _ in [try connection.timed(ping), try connection.timed(read)] }
    return (Figure(lanes[0]), Figure(lanes[1]))
}

/// A durable write and its floor, measured side by side.
struct WriteFigures {
    /// Durable `Write`s of one key.
    var write: Figure
    /// `Peer.Ping` to prefsd: the round trip.
    var ping: Figure
    /// A 4 KiB overwrite of one block and `fdatasync` in the store's directory: the disk.
    var sync: Figure
    /// A WAL frame written as SQLite writes one, and `fdatasync` (``DiskFloor/Pattern/walFrames(pages:)``, one page).
    var frameSync: Figure

    /// The floor: Ping p50 + fdatasync p50.
    var floor: Double? { Self.sum(ping, sync) }

    /// Write p50 / (Ping p50 + fdatasync p50).
    var ratio: Double? { Self.ratio(write, floor) }

    /// Ping p50 + the WAL frame's fdatasync p50.
    var frameFloor: Double? { Self.sum(ping, frameSync) }

    /// Write p50 / (Ping p50 + WAL frame fdatasync p50).
    var frameRatio: Double? { Self.ratio(write, frameFloor) }

    private static func sum(_ a: Figure, _ b: Figure) -> Double? {
        guard let a = a.summary, let b = b.summary else { return nil }
        return a.median + b.median
    }

    private static func ratio(_ figure: Figure, _ floor: Double?) -> Double? {
        guard let floor, let summary = figure.summary else { return nil }
        return summary.median / floor
    }
}

/// Durable `Write`s of one key of the big domain, a new value each time, interleaved with
/// `Peer.Ping` and the disk's floors (``DiskFloor``: one block, a WAL frame) so all four see
/// the same load.
func measureWrites(_ connection: DBusConnection, disk: DiskFloor, frames: DiskFloor, budget: Budget, serial: inout Int64) throws -> WriteFigures {
    let ping = Calls.ping(PreferencesBus.busName)
    for _ in 0..<5 { serial += 1; _ = try connection.timed(Calls.write(bigDomain, "w", serial)) }
    var local = serial
    let lanes = try sample(budget, 4) { _ in
        local += 1
        return [
            try connection.timed(Calls.write(bigDomain, "w", local)), try connection.timed(ping),
            try disk.sample(), try frames.sample(),
        ]
    }
    serial = local
    return WriteFigures(write: Figure(lanes[0]), ping: Figure(lanes[1]), sync: Figure(lanes[2]), frameSync: Figure(lanes[3]))
}

/// dconf `Change`s of one key, a new value each time.
func measureDconfWrites(_ connection: DBusConnection, budget: Budget, serial: inout Int32) throws -> Figure {
    serial += 1
    _ = try connection.timed(Calls.dconfChange([("/bench/w", .int32(serial))]))
    var local = serial
    let lanes = try sample(budget) { _ in
        local += 1
        return [try connection.timed(Calls.dconfChange([("/bench/w", .int32(local))]))]
    }
    serial = local
    return Figure(lanes[0])
}
