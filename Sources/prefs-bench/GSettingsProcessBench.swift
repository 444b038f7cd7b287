import BusTestSupport
import DBus
import Foundation
import GSettingsSnapshots

#if canImport(Glibc)
    import Glibc
#endif

/// `prefs-bench --gsettings-process`: what a whole GSettings program pays for its backend.
/// `gsettings get org.gnome.desktop.interface color-scheme` as a whole process, with
/// `GSETTINGS_BACKEND=dconf` and `=prefsd` taking turns (15 runs each after one warm-up),
/// the module installed as `make install` does (its own directory with GIO's module cache,
/// the machine's own GIO modules, dconf's among them, in `GIO_MODULE_DIR`): the median wall
/// time from spawn to exit and the median peak RSS (VmHWM, as GNU time's `%M` reports it),
/// beside the installed module's size, against their targets. Then the first `gsettings get`
/// after prefsd restarts, with the domain's snapshot written ahead (the domain was read
/// under the previous prefsd) and with none (the list of domains removed), each followed by
/// a run on dconf, the two compared pair by pair.
///
/// The program runs under `/usr/bin/time`: a child's `ru_maxrss` keeps the high-water mark
/// of the memory it had before `exec`, which for a child of this (large) process would be
/// this process's; GNU time is small. Its own cost is the same for both backends.
struct GSettingsProcessBench {
    let quick: Bool

    /// One run: milliseconds from spawn to exit, peak RSS in KiB, what it printed.
    struct Run {
        var milliseconds: Double
        var peakKiB: Int
        var output: String
    }

    static let schema = "org.gnome.desktop.interface"
    static let key = "color-scheme"

    func run() throws {
        let work = try makeTemporaryDirectory("prefs-bench-gsettings-process")
        defer { try? FileManager.default.removeItem(at: work) }
        let modules = work.appendingPathComponent("modules")
        try FileManager.default.createDirectory(at: modules, withIntermediateDirectories: true)
        let module = try GSettingsBench.module()
        let installed = modules.appendingPathComponent("libgioprefsd.so")
        try FileManager.default.copyItem(at: module, to: installed)
        try GIOProgram.check(runCommand("gio-querymodules", [modules.path]), "gio-querymodules")
        let gsettings = try findExecutable("gsettings")

        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let dconf = try DconfInstance(bus: bus.address)
        defer { dconf.stop() }
        try dconf.ensureRunning(probe: connection)
        // One runtime directory for the session, as a desktop has: dconf's shared-memory flags
        // and prefsd's snapshots are both found there.
        var prefsdEnvironment = ProcessInfo.processInfo.environment
        prefsdEnvironment["XDG_RUNTIME_DIR"] = dconf.directory.appendingPathComponent("runtime").path
        let store = work.appendingPathComponent("store")
        func startPrefsd() throws -> PrefsdInstance {
            try PrefsdInstance(
                executable: try siblingExecutable("prefsd"), bus: bus.address, store: store,
                log: work.appendingPathComponent("prefsd.log"), probe: connection, environment: prefsdEnvironment)
        }
        var prefsd = try startPrefsd()
        defer { prefsd.stop() }

        var base = ProcessInfo.processInfo.environment
        for name in ["GIO_MODULE_DIR", "GSETTINGS_SCHEMA_DIR", "GIO_USE_VFS"] { base[name] = nil }
        base["DBUS_SESSION_BUS_ADDRESS"] = bus.address
        base["GIO_EXTRA_MODULES"] = modules.path
        base["XDG_CONFIG_HOME"] = dconf.directory.appendingPathComponent("config").path
        base["XDG_RUNTIME_DIR"] = dconf.directory.appendingPathComponent("runtime").path
        base["HOME"] = dconf.directory.path
        func environment(_ backend: String) -> [String: String] {
            var environment = base
            environment["GSETTINGS_BACKEND"] = backend
            return environment
        }
        // The same value in both backends: each run must print it, proving its backend answered.
        for backend in ["dconf", "prefsd"] {
            try dconf.ensureRunning(probe: connection)
            let set = try Self.measure(gsettings, ["set", Self.schema, Self.key, "prefer-dark"], environment: environment(backend), in: work)
            guard set.output.isEmpty else { throw BenchError("\(backend): gsettings set printed \(set.output)") }
        }
        let runs = quick ? 5 : 15
        var results: [String: [Run]] = [:]
        for round in 0...runs {
            for backend in ["dconf", "prefsd"] {
                try dconf.ensureRunning(probe: connection)
                let run = try Self.measure(gsettings, ["get", Self.schema, Self.key], environment: environment(backend), in: work)
                guard run.output == "'prefer-dark'\n" else { throw BenchError("\(backend): gsettings get printed \(run.output)") }
                // The first round warms the page cache and the services.
                if round > 0 { results[backend, default: []].append(run) }
            }
        }
        // A session's first read after prefsd starts: prefsd restarted before each.
        let snapshots = SnapshotLayout.directory(runtimeDirectory: prefsdEnvironment["XDG_RUNTIME_DIR"], busAddress: bus.address)
        // Each restarted prefsd's read beside a dconf read of the same moment: the two are
        // compared pair by pair, as the machine's speed drifts between the rounds.
        var firstReads: (ahead: [(prefsd: Run, dconf: Run)], none: [(prefsd: Run, dconf: Run)]) = ([], [])
        for _ in 0..<(quick ? 3 : 7) {
            for ahead in [true, false] {
                prefsd.stop()
                if !ahead { try? FileManager.default.removeItem(at: store.appendingPathComponent("snapshot-domains")) }
                prefsd = try startPrefsd()
                if ahead {
                    // Written off the reply path once the store is loaded; at login prefsd
                    // starts before the session's programs, so the read comes after it.
                    let deadline = now() + 5
                    while ((snapshots.flatMap { try? FileManager.default.contentsOfDirectory(atPath: $0) }) ?? []).isEmpty {
                        guard now() < deadline else {
                            let listed = (try? FileManager.default.subpathsOfDirectory(atPath: prefsdEnvironment["XDG_RUNTIME_DIR"] ?? "/")) ?? []
                            let list = (try? String(contentsOf: store.appendingPathComponent("snapshot-domains"), encoding: .utf8)) ?? "(none)"
                            let log = (try? String(contentsOf: work.appendingPathComponent("prefsd.log"), encoding: .utf8)) ?? ""
                            throw BenchError(
                                "prefsd wrote no snapshot ahead within 5 s of starting: \(snapshots ?? "no directory"); runtime: \(listed); list: \(list); log: \(log.suffix(1500))"
                            )
                        }
                        usleep(1_000)
                    }
                }
                let run = try Self.measure(gsettings, ["get", Self.schema, Self.key], environment: environment("prefsd"), in: work)
                guard run.output == "'prefer-dark'\n" else { throw BenchError("prefsd: gsettings get printed \(run.output)") }
                try dconf.ensureRunning(probe: connection)
                let beside = try Self.measure(gsettings, ["get", Self.schema, Self.key], environment: environment("dconf"), in: work)
                guard beside.output == "'prefer-dark'\n" else { throw BenchError("dconf: gsettings get printed \(beside.output)") }
                if ahead { firstReads.ahead.append((run, beside)) } else { firstReads.none.append((run, beside)) }
            }
        }
        let size = (try? FileManager.default.attributesOfItem(atPath: installed.path)[.size] as? Int) ?? 0
        print(Self.table(dconf: results["dconf"] ?? [], prefsd: results["prefsd"] ?? [], moduleBytes: size))
        print(Self.firstReadTable(ahead: firstReads.ahead, none: firstReads.none))
    }

    /// The restarts' rows: medians of each side, and the median of the pairs' differences.
    static func firstReadTable(ahead: [(prefsd: Run, dconf: Run)], none: [(prefsd: Run, dconf: Run)]) -> String {
        func medians(_ pairs: [(prefsd: Run, dconf: Run)]) -> (dconf: Double, prefsd: Double, difference: Double) {
            (
                median(pairs.map(\.dconf.milliseconds)), median(pairs.map(\.prefsd.milliseconds)),
                median(pairs.map { $0.prefsd.milliseconds - $0.dconf.milliseconds })
            )
        }
        let (withSnapshot, without) = (medians(ahead), medians(none))
        return [
            "| first `gsettings get` after prefsd starts (\(ahead.count) restarts each, each beside a dconf run; medians) | dconf | prefsd | difference (median of the pairs') | target | result |",
            "| --- | --- | --- | --- | --- | --- |",
            String(
                format: "| the domain's snapshot written ahead | %.1f ms | %.1f ms | %+.1f ms | ≤ dconf + 0.5 ms | %@ |", withSnapshot.dconf,
                withSnapshot.prefsd, withSnapshot.difference, withSnapshot.difference <= 0.5 ? "met" : "missed"),
            String(
                format: "| no snapshot (the list of domains removed) | %.1f ms | %.1f ms | %+.1f ms | – | – |", without.dconf, without.prefsd,
                without.difference),
        ].joined(separator: "\n")
    }

    static func median(_ values: [Double]) -> Double {
        let sorted = values.sorted()
        return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
    }

    static func table(dconf: [Run], prefsd: [Run], moduleBytes: Int) -> String {
        let wall = (median(dconf.map(\.milliseconds)), median(prefsd.map(\.milliseconds)))
        let peak = (median(dconf.map { Double($0.peakKiB) / 1024 }), median(prefsd.map { Double($0.peakKiB) / 1024 }))
        let megabytes = Double(moduleBytes) / 1_000_000
        func verdict(_ met: Bool) -> String { met ? "met" : "missed" }
        return [
            "| `gsettings get \(schema) \(key)`, whole process (\(prefsd.count) runs each, taking turns; medians) | dconf | prefsd | target | result |",
            "| --- | --- | --- | --- | --- |",
            String(format: "| wall time, spawn to exit | %.1f ms | %.1f ms | ≤ dconf + 1 ms | %@ |", wall.0, wall.1, verdict(wall.1 <= wall.0 + 1)),
            String(format: "| peak RSS (VmHWM) | %.1f MiB | %.1f MiB | ≤ dconf + 2 MiB | %@ |", peak.0, peak.1, verdict(peak.1 <= peak.0 + 2)),
            String(format: "| installed module `libgioprefsd.so` | | %.2f MB | ≤ 10 MB | %@ |", megabytes, verdict(megabytes <= 10)),
        ].joined(separator: "\n")
    }

    /// Runs `executable` with `arguments` to its end under GNU time; its output goes through a file in `directory`.
    static func measure(_ executable: String, _ arguments: [String], environment: [String: String], in directory: URL) throws -> Run {
        let rssPath = directory.appendingPathComponent("gsettings-rss").path
        let run = try spawnTimed(
            "/usr/bin/time", ["-f", "%M", "-o", rssPath, executable] + arguments, environment: environment,
            output: directory.appendingPathComponent("gsettings-output").path)
        let rss = (try? String(contentsOfFile: rssPath, encoding: .utf8))?.split(separator: "\n").last.flatMap { Int($0) }
        guard let rss else { throw BenchError("/usr/bin/time reported no peak RSS") }
        return Run(milliseconds: run.seconds * 1000, peakKiB: rss, output: run.output)
    }
}
