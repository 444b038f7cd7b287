import BenchmarkKit
import BusTestSupport
import DBus
import Dispatch
import Foundation
import Logging
import PreferencesModel
import PreferencesStore
import Synchronization

/// A durable `Write` to a prefsd keeping the change journal beside the
/// same to one with `--history-entries 0` (each on a private bus of its own, sampled taking
/// turns so both see the same load), and the journal's size after many changes of one key.
struct HistoryBench {
    var quick: Bool
    /// Changes of one key for the size row.
    var changes: Int

    func run() throws {
        let loadBefore = Machine.load
        let work = try makeTemporaryDirectory("prefs-bench-history")
        defer { try? FileManager.default.removeItem(at: work) }
        let prefsdPath = try siblingExecutable("prefsd")

        log("Write with and without the journal, taking turns")
        let writes = try measureWrites(prefsd: prefsdPath, work: work)
        log("journal size after \(changes) changes of one key")
        let size = try measureJournal(directory: work.appendingPathComponent("journal"))
        log("prefs history --limit 3 on that journal")
        let reads = try measureReads(prefsd: prefsdPath, store: work.appendingPathComponent("journal"), work: work)
        let cost = HistoryCost(
            withJournal: writes.with, withoutJournal: writes.without,
            oneFrameSync: writes.oneFrame, twoFrameSync: writes.twoFrames, changes: changes,
            entries: size.entries, bytes: size.bytes,
            entryBound: HistoryBounds.defaults.entries, byteBound: HistoryBounds.defaults.bytes,
            fileBytes: size.fileBytes, newestRead: reads.newest, wholeRead: reads.whole, readFloor: reads.floor)
        print("| what | figure | target | |")
        print("| --- | --- | --- | --- |")
        for row in cost.rows { print("| " + row.joined(separator: " | ") + " |") }
        print()
        print("Load: \(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages). \(Machine.description)")
        print("The size row goes through the store's writer in process (group commit, default bounds), not the bus.")
    }

    /// Median seconds of a durable `Write`, journal on and off, and of the disk's floor for
    /// each: a WAL-shaped sync of one frame (the preference's page) and of two (one page
    /// more, as anything recorded in the same commit adds), in the stores' directory.
    private func measureWrites(
        prefsd: String, work: URL
    ) throws -> (with: Double, without: Double, oneFrame: Double, twoFrames: Double) {
        var connections: [DBusConnection] = []
        var instances: [PrefsdInstance] = []
        var buses: [PrivateBus] = []
        defer {
            for instance in instances { instance.stop() }
            for connection in connections { connection.close() }
            for bus in buses { bus.stop() }
        }
        for (name, arguments) in [("with", [String]()), ("without", ["--history-entries", "0"])] {
            let bus = try PrivateBus()
            buses.append(bus)
            let connection = try DBusConnection.connect(address: bus.address)
            connections.append(connection)
            instances.append(
                try PrefsdInstance(
                    executable: prefsd, bus: bus.address,
                    store: work.appendingPathComponent("store-\(name)"),
                    log: work.appendingPathComponent("prefsd-\(name).log"),
                    probe: connection, arguments: arguments))
        }
        var serial: Int64 = 0
        for connection in connections {
            for _ in 0..<5 { serial += 1; _ = try connection.timed(Calls.write("bench.history", "w", serial)) }
        }
        let oneFrame = try DiskFloor(directory: work, pattern: .walFrames(pages: 1))
        let twoFrames = try DiskFloor(directory: work, pattern: .walFrames(pages: 2))
        let budget = quick ? Budget(count: 200, seconds: 3) : Budget(count: 2_000, seconds: 20)
        let lanes = try sample(budget, 4) { i in
            serial += 1
            // Alternate which goes first, so neither always follows the other's fsync.
            let order = i % 2 == 0 ? [0, 1] : [1, 0]
            var taken = [0.0, 0.0, 0.0, 0.0]
            for lane in order { taken[lane] = try connections[lane].timed(Calls.write("bench.history", "w", serial)) }
            if i % 2 == 0 {
                taken[2] = try oneFrame.sample()
                taken[3] = try twoFrames.sample()
            } else {
                taken[3] = try twoFrames.sample()
                taken[2] = try oneFrame.sample()
            }
            return taken
        }
        let medians = lanes.map { Summary($0)?.median }
        guard let with = medians[0], let without = medians[1], let one = medians[2], let two = medians[3] else {
            throw BenchError("no Write was timed")
        }
        return (with, without, one, two)
    }

    /// Median seconds of `prefs history bench.history --limit 3` (a whole process: the
    /// newest entries, `RecentHistory`), of the same with `--since` the epoch (which reads
    /// the whole journal with `History`), and of `prefs read` of one key (the floor: a
    /// `prefs` process and one call), taking turns against a prefsd serving `store`.
    private func measureReads(prefsd: String, store: URL, work: URL) throws -> (newest: Double, whole: Double, floor: Double) {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let instance = try PrefsdInstance(
            executable: prefsd, bus: bus.address, store: store, log: work.appendingPathComponent("prefsd-reads.log"), probe: connection)
        defer { instance.stop() }
        let prefs = try siblingExecutable("prefs")
        let environment = ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        func timed(_ arguments: [String], lines expected: Int) throws -> Double {
            let start = now()
            let result = try runCommand(prefs, arguments, environment: environment, timeout: .seconds(120))
            let taken = now() - start
            let lines = result.stdout.split(separator: "\n").count
            guard result.status == 0, lines == expected else {
                throw BenchError("prefs \(arguments.joined(separator: " ")) exited \(result.status) with \(lines) lines: \(result.stderr)")
            }
            return taken
        }
        var newest: [Double] = []
        var whole: [Double] = []
        var floor: [Double] = []
        for _ in 0..<(quick ? 5 : 9) {
            newest.append(try timed(["history", "bench.history", "--limit", "3"], lines: 3))
            whole.append(try timed(["history", "bench.history", "--limit", "3", "--since", "1970-01-01"], lines: 3))
            floor.append(try timed(["read", "bench.history", "k"], lines: 1))
        }
        guard let newestMedian = Summary(newest)?.median, let wholeMedian = Summary(whole)?.median,
            let floorMedian = Summary(floor)?.median
        else { throw BenchError("no history read was timed") }
        return (newestMedian, wholeMedian, floorMedian)
    }

    /// Commits `changes` changes of one key to a store with the default bounds, in windows
    /// of queued batches (group commit), and reads what the journal kept.
    private func measureJournal(directory: URL) throws -> (entries: Int, bytes: Int, fileBytes: Int) {
        let store = try DomainStore(directory: directory, logger: Logger(label: "prefs-bench"))
        let domain = try DomainName("bench.history")
        let window = 1_000
        var made = 0
        var failure: StoreError?
        while made < changes && failure == nil {
            let count = min(window, changes - made)
            let done = DispatchSemaphore(value: 0)
            let failed = Mutex<StoreError?>(nil)
            for n in 0..<count {
                let last = n == count - 1
                store.commit([.set(domain, key: "k", value: .integer(Int64(made + n)))], who: "prefs-bench") { result in
                    if case .failure(let error) = result { failed.withLock { $0 = $0 ?? error } }
                    if last { done.signal() }
                }
            }
            guard done.wait(timeout: .now() + 120) == .success else { throw BenchError("a window of \(count) commits took over 120 s") }
            failure = failed.withLock { $0 }
            made += count
        }
        if let failure { throw BenchError("a commit failed: \(failure)") }
        let totals = store.historyTotals
        store.close()
        let files = ["store.sqlite", "store.sqlite-wal"].map { directory.appendingPathComponent($0).path }
        let fileBytes = files.compactMap { try? FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int }.reduce(0, +)
        return (totals.entries, totals.bytes, fileBytes)
    }
}
