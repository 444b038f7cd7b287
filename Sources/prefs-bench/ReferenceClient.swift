import BenchmarkKit
import DBus
import Foundation
import PreferencesProtocol

/// The GDBus reference client: a small C program linking gio-2.0 (the D-Bus client most
/// Linux desktop programs use) that times `g_dbus_connection_call_sync` of prefsd's `Read`
/// of the key the Swift client reads, and `Peer.Ping`, on the benchmark's bus. It runs as a
/// child process driven over its standard input, so that its calls and the Swift client's
/// take turns in small batches within the same seconds.
final class ReferenceClient {
    private let child: Child

    /// Compiles the program in `directory` (``GIOProgram``), starts it on the bus at `bus`
    /// and waits (at most 30 s) until it has read `key` of `domain` and found `expected`
    /// (a GVariant in text form).
    init(bus: String, directory: URL, domain: String, key: String, expected: String) throws {
        let executable = try GIOProgram.compile(Self.program, named: "gdbus-read", in: directory)
        // A child that died must make writeLine throw, not kill the benchmark.
        signal(SIGPIPE, SIG_IGN)
        child = try Child(
            executable,
            [
                bus, PreferencesBus.busName, PreferencesBus.objectPath, PreferencesBus.interface,
                domain, key, expected,
            ],
            log: directory.appendingPathComponent("gdbus-read.log"), input: true)
        guard child.readLine(timeout: 30) == "ready" else {
            child.stop()
            throw BenchError("the GDBus client did not start: \(failure)")
        }
    }

    /// `count` pairs of `Peer.Ping` then `Read`, in seconds.
    func batch(_ count: Int) throws -> (ping: [Double], read: [Double]) {
        try child.writeLine("\(count)")
        guard let line = child.readLine(timeout: 60) else { throw BenchError("the GDBus client stopped answering: \(failure)") }
        let numbers = line.split(separator: " ").compactMap { Double($0) }
        guard numbers.count == 2 * count else { throw BenchError("the GDBus client printed \(numbers.count) numbers, not \(2 * count)") }
        let seconds = numbers.map { $0 * 1e-9 }
        return (
            stride(from: 0, to: seconds.count, by: 2).map { seconds[$0] },
            stride(from: 1, to: seconds.count, by: 2).map { seconds[$0] }
        )
    }

    func stop() {
        try? child.writeLine("0")
        child.stop()
    }

    /// What the program wrote on standard error.
    private var failure: String {
        let text = (try? String(contentsOf: child.logFile, encoding: .utf8)) ?? ""
        return text.isEmpty ? "no message (see \(child.logFile.path))" : text.trimmingCharacters(in: .whitespacesAndNewlines)
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

    /// The report's row; the target is issue 16's: Swift `Read` ≤ 1.05 × GDBus `Read`.
    var row: [String] {
        let ratio = swiftOverGDBus
        return [
            "`Read` through GDBus (C, gio-2.0)",
            gdbusRead.text + (gdbusRead.summary.map { " (n=\($0.count))" } ?? ""),
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
/// client, seconds in all) is spent. A missing compiler or gio-2.0 is reported in the row.
func measureReferenceReads(_ connection: DBusConnection, bus: String, directory: URL, budget: Budget) -> ReferenceReads {
    let client: ReferenceClient
    do {
        client = try ReferenceClient(bus: bus, directory: directory, domain: bigDomain, key: "probe", expected: "int64 1")
    } catch {
        return .missing("not measured: \(error)")
    }
    defer { client.stop() }
    let ping = Calls.ping(PreferencesBus.busName)
    let read = Calls.read(bigDomain, "probe")
    do {
        // Warm up both.
        for _ in 0..<50 { _ = try connection.timed(ping); _ = try connection.timed(read) }
        _ = try client.batch(50)
        var swift: (ping: [Double], read: [Double]) = ([], [])
        var gdbus: (ping: [Double], read: [Double]) = ([], [])
        let start = now()
        while swift.read.count < budget.count && (swift.read.count < budget.minimum || now() - start < budget.seconds) {
            for _ in 0..<ReferenceReads.batch {
                swift.ping.append(try connection.timed(ping))
                swift.read.append(try connection.timed(read))
            }
            let theirs = try client.batch(ReferenceReads.batch)
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
    /// `--only-client-reads`: the 0-keys `Read`/Ping row and the GDBus reference row.
    func measureClientReads(_ connection: DBusConnection, bus: String, work: URL, report: inout Report) throws {
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
        report.reference = measureReferenceReads(connection, bus: bus, directory: work, budget: referenceBudget)
    }

    /// The reference client's budget: pairs per client and seconds, as the size sweep's reads.
    var referenceBudget: Budget {
        quick ? Budget(count: 2_000, seconds: 2) : Budget(count: 20_000, seconds: 8)
    }
}
