import BenchmarkKit
import BusTestSupport
import DBus
import Foundation
import GSettingsSchemas
import PreferencesModel

/// What holding values to the installed GSettings schemas costs: the check a `Write` of a
/// schema key runs (looking the key up by domain and key, then whether it holds the value)
/// beside the lookup a `Write` of a key no schema describes runs, in this process; reading
/// the schemas (this environment's, as prefsd reads them), in this process; and prefsd's
/// start and memory with the machine's schemas beside with none, taking turns.
struct SchemaBench {
    var quick: Bool

    func run() throws {
        let loadBefore = Machine.load
        let directories = SchemaDirectories.glib(environment: ProcessInfo.processInfo.environment)
        let index = SchemaIndex(directories: directories)
        guard index.schemaCount > 0 else {
            throw BenchError("no compiled GSettings schemas in \(directories.joined(separator: ":")): install gsettings-desktop-schemas")
        }
        log("the check of a Write, in process")
        let check = checkCost(index)
        log("reading the schemas, in process")
        let reads = (0..<(quick ? 20 : 100)).map { _ in timed { _ = SchemaIndex(directories: directories) } }.sorted()
        log("prefsd with the machine's schemas and with none, taking turns")
        let starts = try startCost(rounds: quick ? 3 : 7)

        print("| what | figure | target |")
        print("| --- | --- | --- |")
        print("| check of a schema key's value (lookup + holds, org.gnome.desktop session/idle-delay = 600) | \(nanoseconds(check.schema)) | ≤ 2 µs |")
        print("| lookup for a key no schema describes (com.example.Editor FontSize) | \(nanoseconds(check.other)) | no slower than before |")
        print(
            "| reading the schemas (\(index.schemaCount) schemas, \(index.keyCount) keys, from \(index.directories.joined(separator: ":"))), p50 / p99 | \(milliseconds(Summary.percentile(50, ofSorted: reads))) / \(milliseconds(Summary.percentile(99, ofSorted: reads))) | ≤ 10 ms |"
        )
        print(
            "| prefsd's start to its first Read answered, with schemas / without, p50 | \(milliseconds(starts.withStart)) / \(milliseconds(starts.withoutStart)) (+\(milliseconds(starts.withStart - starts.withoutStart))) | ≤ 10 ms more |"
        )
        print(
            "| prefsd's resident memory settled after start, with schemas / without, p50 | \(mebibytes(starts.withMemory.total)) / \(mebibytes(starts.withoutMemory.total)) (+\(kibibytes(starts.withMemory.total - starts.withoutMemory.total))) | ≤ 2 MiB more |"
        )
        print(
            "| of which libraries and mapped files / heap and stacks, with schemas | \(mebibytes(starts.withMemory.libraries)) / \(mebibytes(starts.withMemory.other)) | |"
        )
        print(
            "| of which libraries and mapped files / heap and stacks, without | \(mebibytes(starts.withoutMemory.libraries)) / \(mebibytes(starts.withoutMemory.other)) | |"
        )
        print()
        print("Load: \(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages). \(Machine.description)")
        print("prefsd links GIO in both runs; \"without\" points XDG_DATA_HOME and XDG_DATA_DIRS at an empty directory.")
    }

    /// Seconds per check, median of batches: a schema key's, and a key no schema describes.
    private func checkCost(_ index: SchemaIndex) -> (schema: Double, other: Double) {
        let calls = quick ? 20_000 : 100_000
        let value = PropertyListValue.integer(600)
        var held = 0
        let schema = (0..<15).map { _ in
            timed {
                for _ in 0..<calls where index.rule(domain: "org.gnome.desktop", key: "session/idle-delay")?.holds(value) == true { held += 1 }
            } / Double(calls)
        }.sorted()
        let other = (0..<15).map { _ in
            timed {
                for _ in 0..<calls where index.rule(domain: "com.example.Editor", key: "FontSize") != nil { held += 1 }
            } / Double(calls)
        }.sorted()
        precondition(held == 15 * calls, "idle-delay holds 600")
        return (schema[7], other[7])
    }

    /// prefsd started with this machine's schemas and with none: seconds to its first `Read`
    /// answered and resident bytes once its start has settled, medians.
    private func startCost(rounds: Int) throws -> (
        withStart: Double, withoutStart: Double, withMemory: (total: Double, libraries: Double, other: Double),
        withoutMemory: (total: Double, libraries: Double, other: Double)
    ) {
        let work = try makeTemporaryDirectory("prefs-bench-schemas")
        defer { try? FileManager.default.removeItem(at: work) }
        let prefsd = try siblingExecutable("prefsd")
        let bus = try PrivateBus()
        defer { bus.stop() }
        let probe = try DBusConnection.connect(address: bus.address)
        defer { probe.close() }
        let empty = work.appendingPathComponent("no-data").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        var base = ProcessInfo.processInfo.environment
        base["GSETTINGS_SCHEMA_DIR"] = nil
        let environments = [
            base.merging(["XDG_DATA_HOME": empty, "XDG_DATA_DIRS": "/usr/local/share:/usr/share"]) { $1 },
            base.merging(["XDG_DATA_HOME": empty, "XDG_DATA_DIRS": empty]) { $1 },
        ]
        var starts: [[Double]] = [[], []]
        var memory: [[ResidentMemory]] = [[], []]
        for round in 0..<rounds {
            for which in round % 2 == 0 ? [0, 1] : [1, 0] {
                let store = work.appendingPathComponent("store-\(round)-\(which)")
                let instance = try PrefsdInstance(
                    executable: prefsd, bus: bus.address, store: store, log: work.appendingPathComponent("prefsd.log"), probe: probe,
                    environment: environments[which])
                defer { instance.stop() }
                starts[which].append(instance.startup)
                // prefsd gives back its start's memory two seconds after its load.
                usleep(3_000_000)
                memory[which].append(try ResidentMemory(pid: instance.child.process.processIdentifier, executable: prefsd))
            }
        }
        let median = { (samples: [Double]) in samples.sorted()[samples.count / 2] }
        let parts = { (samples: [ResidentMemory]) in
            (median(samples.map { Double($0.total) }), median(samples.map { Double($0.libraries) }), median(samples.map { Double($0.other) }))
        }
        return (median(starts[0]), median(starts[1]), parts(memory[0]), parts(memory[1]))
    }

    private func timed(_ body: () -> Void) -> Double {
        let start = now()
        body()
        return now() - start
    }

    private func nanoseconds(_ seconds: Double) -> String { String(format: "%.0f ns", seconds * 1e9) }
    private func milliseconds(_ seconds: Double) -> String { String(format: "%.2f ms", seconds * 1e3) }
    private func mebibytes(_ bytes: Double) -> String { String(format: "%.1f MiB", bytes / 1_048_576) }
    private func kibibytes(_ bytes: Double) -> String { String(format: "%.0f KiB", bytes / 1024) }
}
