import BenchmarkKit
import BusTestSupport
import Foundation
import PreferencesProtocol
@_spi(Testing) import PreferencesStore

/// The C programs the GDBus rows need, compiled once per run before anything is measured,
/// so that a missing compiler or library stops the run at once, naming what to install.
struct ReferencePrograms {
    /// The GDBus reference client (``ReferenceClient``).
    let client: String
    /// The floor service (``FloorService``).
    let floor: String
    /// The store floor (``StoreFloorService``).
    let storeFloor: String
    /// The private bus's address.
    let bus: String
    /// The run's directory: the programs, their logs.
    let directory: URL
    /// prefsd's store directory: the client's `fdatasync` probe and the floor's WAL live there,
    /// on the store's file system.
    let store: URL

    /// Compiles the three programs in `directory`.
    /// - Throws: ``BenchError`` naming the program and what to install.
    init(bus: String, directory: URL, store: URL) throws {
        do {
            client = try ReferenceClient.compile(in: directory)
        } catch {
            throw BenchError("cannot build the GDBus reference client (needs cc and libglib2.0-dev): \(error)")
        }
        do {
            floor = try compileCProgram(
                FloorService.source, named: FloorService.executableName, in: directory, library: "dbus-1", package: "libdbus-1-dev")
        } catch {
            throw BenchError("cannot build the floor service (needs cc and libdbus-1-dev): \(error)")
        }
        do {
            storeFloor = try compileCProgram(
                storeFloorCSource(), named: StoreFloorService.executableName, in: directory,
                library: StoreFloorService.libraries, package: StoreFloorService.packages)
        } catch {
            throw BenchError("cannot build the store floor (needs cc, \(StoreFloorService.packages)): \(error)")
        }
        self.bus = bus
        self.directory = directory
        self.store = store
    }

    /// A GDBus reference client on the bus, logging to `log` in the run's directory.
    func startClient(log: String) throws -> ReferenceClient {
        try ReferenceClient(executable: client, bus: bus, storeDirectory: store, log: directory.appendingPathComponent(log))
    }
}

/// The store floor's C source, with the SQL of this prefsd's store.
func storeFloorCSource() throws -> String {
    let sql = try StoreSQL.current()
    return StoreFloorService.source(tables: sql.tables, statements: sql.statements)
}

/// A floor service running on the benchmark's bus (``FloorService`` or ``StoreFloorService``);
/// it ends when ``stop()`` closes its standard input (or when this process dies, which closes
/// it too).
final class FloorInstance {
    private let child: Child

    /// The service's process ID.
    var pid: Int32 { child.pid }

    /// Starts `executable` with `arguments` and waits (at most 30 s) until it owns its name.
    init(_ executable: String, _ arguments: [String], log: URL, what: String) throws {
        // A child that died must make writeLine throw, not kill the benchmark.
        signal(SIGPIPE, SIG_IGN)
        child = try Child(executable, arguments, log: log, input: true)
        guard child.readLine(timeout: 30) == "ready" else {
            child.stop()
            throw BenchError("\(what) did not start: \(child.standardErrorText)")
        }
    }

    /// The floor service, its WAL-shaped file in the store's directory.
    static func floor(_ programs: ReferencePrograms) throws -> FloorInstance {
        try FloorInstance(
            programs.floor,
            FloorService.arguments(
                address: programs.bus, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                walFile: programs.store.appendingPathComponent(".prefs-bench-floor-wal").path),
            log: programs.directory.appendingPathComponent("floor-service.log"), what: "the floor service")
    }

    /// The store floor, its database in the store's directory (on the store's file system).
    static func storeFloor(_ programs: ReferencePrograms) throws -> FloorInstance {
        let database = programs.store.appendingPathComponent(".prefs-bench-store-floor.sqlite")
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: database.path + suffix) }
        return try FloorInstance(
            programs.storeFloor,
            StoreFloorService.arguments(
                address: programs.bus, path: PreferencesBus.objectPath, interface: PreferencesBus.interface, database: database.path),
            log: programs.directory.appendingPathComponent("store-floor-service.log"), what: "the store floor")
    }

    func stop() { child.finish() }
}

extension Benchmark {
    /// The floor rows' budgets: reads as the reference client's, writes as the size sweep's.
    var floorBudget: (reads: Budget, writes: Budget) {
        (referenceBudget, quick ? Budget(count: 200, seconds: 2) : Budget(count: 2_000, seconds: 8))
    }
}

/// Rounds per batch in the floor rows: one line of the client's output.
private let readBatch = 100
private let writeBatch = 20
/// The domain the GDBus client writes to prefsd (a small one: the size sweep's is big).
private let writeDomain = "bench.gdbus"

/// prefsd and the floor service timed by one GDBus reference client call by call (each round
/// calls both, every other round the floor first): `Read` of the size sweep's probe key
/// beside `Peer.Ping`, then durable `Write`s beside `Peer.Ping` and the disk's `fdatasync`,
/// the store floor's too, until `budget` (rounds, seconds) is spent. Failures are reported
/// in the rows.
func measureFloor(programs: ReferencePrograms, budget: (reads: Budget, writes: Budget)) -> FloorComparison {
    let floor: FloorInstance
    let storeFloor: FloorInstance
    do {
        floor = try .floor(programs)
    } catch {
        return .missing("not measured: \(error)")
    }
    defer { floor.stop() }
    do {
        storeFloor = try .storeFloor(programs)
    } catch {
        return .missing("not measured: \(error)")
    }
    defer { storeFloor.stop() }
    let client: ReferenceClient
    do {
        client = try programs.startClient(log: "gdbus-floor.log")
    } catch {
        return .missing("not measured: \(error)")
    }
    defer { client.stop() }
    let services = [PreferencesBus.busName, FloorService.busName]
    let writers = services + [StoreFloorService.busName]
    do {
        try client.check(PreferencesBus.busName, domain: bigDomain, key: "probe", expected: "int64 1")
        try client.check(FloorService.busName, domain: bigDomain, key: "probe", expected: FloorService.readAnswer)
        _ = try client.reads(services, domain: bigDomain, key: "probe", count: 50)
        try client.check(StoreFloorService.busName, domain: bigDomain, key: "probe", expected: FloorService.readAnswer)
        _ = try client.writes(writers, domain: writeDomain, key: "w", count: 5)
        var samples = [Samples(), Samples(), Samples()]
        try spend(budget.reads, batch: readBatch) {
            for (index, taken) in try client.reads(services, domain: bigDomain, key: "probe", count: readBatch).enumerated() {
                samples[index].readPing += taken.ping
                samples[index].read += taken.read
            }
        }
        try spend(budget.writes, batch: writeBatch) {
            for (index, taken) in try client.writes(writers, domain: writeDomain, key: "w", count: writeBatch).enumerated() {
                samples[index].writePing += taken.ping
                samples[index].write += taken.write
                samples[index].sync += taken.sync
            }
        }
        let times = samples.map { taken in
            ServiceTimes(
                readPing: Figure(taken.readPing), read: Figure(taken.read),
                writePing: Figure(taken.writePing), write: Figure(taken.write), sync: Figure(taken.sync))
        }
        return FloorComparison(prefsd: times[0], floor: times[1], storeFloor: times[2], readBatch: readBatch, writeBatch: writeBatch)
    } catch {
        return .missing("failed: \(error)")
    }
}

/// One service's samples in the floor rows, in seconds.
private struct Samples {
    var readPing: [Double] = []
    var read: [Double] = []
    var writePing: [Double] = []
    var write: [Double] = []
    var sync: [Double] = []
}

/// Runs `body` (one batch of `batch` rounds) until `budget` is spent, counting rounds.
private func spend(_ budget: Budget, batch: Int, _ body: () throws -> Void) rethrows {
    let start = now()
    var taken = 0
    while taken < budget.count && (taken < budget.minimum || now() - start < budget.seconds) {
        try body()
        taken += batch
    }
}
