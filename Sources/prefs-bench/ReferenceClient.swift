import BenchmarkKit
import DBus
import Foundation
import PreferencesProtocol

/// The GDBus reference client: a small C program linking gio-2.0 (the D-Bus client most
/// Linux desktop programs use) that times `g_dbus_connection_call_sync` of `Read`, durable
/// `Write` and `Peer.Ping` on the benchmark's bus, to prefsd or to the floor service
/// (``FloorService``). It runs as a child process driven over its standard input, so that
/// its calls and the Swift client's (or its calls to two services) take turns in small
/// batches within the same seconds.
final class ReferenceClient {
    private let child: Child

    /// Compiles the program in `directory` (``GIOProgram``) and returns the executable's path.
    static func compile(in directory: URL) throws -> String {
        try GIOProgram.compile(program, named: "gdbus-client", in: directory)
    }

    /// Starts `executable` (from ``compile(in:)``) on the bus at `bus`, with its `fdatasync`
    /// probe file in `storeDirectory`, and waits (at most 30 s) until it is connected.
    init(executable: String, bus: String, storeDirectory: URL, log: URL) throws {
        // A child that died must make writeLine throw, not kill the benchmark.
        signal(SIGPIPE, SIG_IGN)
        child = try Child(
            executable,
            [
                bus, PreferencesBus.objectPath, PreferencesBus.interface,
                storeDirectory.appendingPathComponent(".prefs-bench-gdbus-fdatasync").path,
            ],
            log: log, input: true)
        guard child.readLine(timeout: 30) == "ready" else {
            child.stop()
            throw BenchError("the GDBus client did not start: \(child.standardErrorText)")
        }
    }

    /// Checks that `Read(domain, key)` of `name` answers `expected` (GVariant text).
    func check(_ name: String, domain: String, key: String, expected: String) throws {
        try child.writeLine("check \(name) \(domain) \(key) \(expected)")
        guard child.readLine(timeout: 30) == "ok" else { throw BenchError("the GDBus client's check failed: \(child.standardErrorText)") }
    }

    /// `count` rounds of `Peer.Ping` then `Read(domain, key)` to each service of `names` (up
    /// to 4; call by call, every other round in reverse order), in seconds, per service.
    func reads(_ names: [String], domain: String, key: String, count: Int) throws -> [(ping: [Double], read: [Double])] {
        let lanes = try batch("read \(names.joined(separator: ",")) \(domain) \(key) \(count)", lanes: 2 * names.count, rounds: count)
        return names.indices.map { (lanes[2 * $0], lanes[2 * $0 + 1]) }
    }

    /// `count` rounds of `Peer.Ping`, `Write(domain, key, <int64 n>)` and 4 KiB + `fdatasync`
    /// in the store's directory for each service of `names` (as ``reads(_:domain:key:count:)``),
    /// in seconds, per service.
    func writes(_ names: [String], domain: String, key: String, count: Int) throws -> [(ping: [Double], write: [Double], sync: [Double])] {
        let lanes = try batch("write \(names.joined(separator: ",")) \(domain) \(key) \(count)", lanes: 3 * names.count, rounds: count)
        return names.indices.map { (lanes[3 * $0], lanes[3 * $0 + 1], lanes[3 * $0 + 2]) }
    }

    private func batch(_ command: String, lanes: Int, rounds: Int) throws -> [[Double]] {
        try child.writeLine(command)
        guard let line = child.readLine(timeout: 120) else {
            throw BenchError("the GDBus client stopped answering: \(child.standardErrorText)")
        }
        do {
            return try SampleLine.lanes(line, lanes: lanes, rounds: rounds)
        } catch {
            throw BenchError("the GDBus client's answer to `\(command)`: \(error)")
        }
    }

    func stop() {
        try? child.writeLine("quit")
        child.finish()
    }
}

/// `Read` and `Peer.Ping` through the Swift client and through the GDBus reference client,
/// measured in alternating batches in the same time window.
struct ReferenceReads {
    var swiftPing: Figure
    var swiftRead: Figure
    var gdbusPing: Figure
    var gdbusRead: Figure

    /// Nothing measured, for `reason`.
    static func missing(_ reason: String) -> ReferenceReads {
        ReferenceReads(
            swiftPing: .missing(reason), swiftRead: .missing(reason),
            gdbusPing: .missing(reason), gdbusRead: .missing(reason))
    }

    /// The ratio of two medians, when both were measured.
    private static func ratio(_ a: Figure, _ b: Figure) -> Double? {
        guard let a = a.summary, let b = b.summary else { return nil }
        return a.median / b.median
    }

    /// Swift `Read` p50 / GDBus `Read` p50.
    var swiftOverGDBus: Double? { Self.ratio(swiftRead, gdbusRead) }

    /// The report's row; the target: Swift `Read` ≤ 1.05 × GDBus `Read`.
    var row: [String] {
        let ratio = swiftOverGDBus
        return [
            "`Read` through GDBus (C, gio-2.0)",
            gdbusRead.countedText,
            "`Read` through the Swift client, same window", swiftRead.text,
            ratio.map { "Swift/GDBus \(Format.ratio($0))" } ?? "–", "≤ 1.05×",
            ratio.map { $0 <= 1.05 ? "met" : "**missed**" } ?? "–",
        ]
    }

    /// The note beside the table: both clients' `Read`/`Ping`.
    var note: String {
        func text(_ read: Figure, _ ping: Figure) -> String {
            guard let ratio = Self.ratio(read, ping), let ping = ping.summary else { return "–" }
            return "Read/Ping \(Format.ratio(ratio)) (Ping \(Format.duration(ping.median)))"
        }
        return
            "GDBus reference client (`g_dbus_connection_call_sync`, one C program) and the Swift client take turns in batches of \(ReferenceReads.batch) Ping+Read pairs on the same key: GDBus \(text(gdbusRead, gdbusPing)), Swift \(text(swiftRead, swiftPing))."
    }

    /// Pairs per batch: small enough that both clients see the same load.
    static let batch = 100
}

/// Runs the GDBus reference client beside `connection` (the Swift client) on the key of the
/// big domain the size sweep reads (`probe`, holding the integer 1), until `budget` (pairs per
/// client, seconds in all) is spent. A client that fails to start is reported in the row.
func measureReferenceReads(_ connection: DBusConnection, programs: ReferencePrograms, budget: Budget) -> ReferenceReads {
    let client: ReferenceClient
    do {
        client = try programs.startClient(log: "gdbus-read.log")
        try client.check(PreferencesBus.busName, domain: bigDomain, key: "probe", expected: "int64 1")
    } catch {
        return .missing("not measured: \(error)")
    }
    defer { client.stop() }
    let ping = Calls.ping(PreferencesBus.busName)
    let read = Calls.read(bigDomain, "probe")
    func gdbusBatch(_ count: Int) throws -> (ping: [Double], read: [Double]) {
        try client.reads([PreferencesBus.busName], domain: bigDomain, key: "probe", count: count)[0]
    }
    do {
        // Warm up both.
        for _ in 0..<50 { _ = try connection.timed(ping); _ = try connection.timed(read) }
        _ = try gdbusBatch(50)
        var swift: (ping: [Double], read: [Double]) = ([], [])
        var gdbus: (ping: [Double], read: [Double]) = ([], [])
        let start = now()
        while swift.read.count < budget.count && (swift.read.count < budget.minimum || now() - start < budget.seconds) {
            for _ in 0..<ReferenceReads.batch {
                swift.ping.append(try connection.timed(ping))
                swift.read.append(try connection.timed(read))
            }
            let theirs = try gdbusBatch(ReferenceReads.batch)
            gdbus.ping += theirs.ping
            gdbus.read += theirs.read
        }
        return ReferenceReads(
            swiftPing: Figure(swift.ping), swiftRead: Figure(swift.read),
            gdbusPing: Figure(gdbus.ping), gdbusRead: Figure(gdbus.read))
    } catch {
        return .missing("failed: \(error)")
    }
}

extension Benchmark {
    /// `--only-client-reads`: the 0-keys `Read`/Ping row, the GDBus reference row and the
    /// floor rows (prefsd beside the minimal libdbus service, through GDBus).
    func measureClientReads(_ connection: DBusConnection, programs: ReferencePrograms, report: inout Report) throws {
        _ = try connection.callBlocking(Calls.write(bigDomain, "probe", 1))
        log("Read beside Ping")
        let (ping, read) = try measureReads(
            connection, budget: quick ? Budget(count: 2_000, seconds: 2) : Budget(count: 20_000, seconds: 8))
        let notRun = Figure.missing("not run")
        report.sizes.append(
            SizeResult(
                keys: 0, ping: ping, read: read, write: WriteFigures(write: notRun, ping: notRun, sync: notRun, frameSync: notRun),
                dconfWrite: notRun))
        log("Read through the GDBus reference client beside the Swift client")
        report.reference = measureReferenceReads(connection, programs: programs, budget: referenceBudget)
        log("prefsd beside the floor service, through the GDBus reference client")
        report.floor = measureFloor(programs: programs, budget: floorBudget)
    }

    /// The reference client's budget: pairs per client and seconds, as the size sweep's reads.
    var referenceBudget: Budget {
        quick ? Budget(count: 2_000, seconds: 2) : Budget(count: 20_000, seconds: 8)
    }
}
