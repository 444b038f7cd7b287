import BusTestSupport
import DBus
import Foundation

/// `prefs-bench --gsettings`: one small C program reading a GSettings key in a loop, run
/// with `GSETTINGS_BACKEND=dconf` and with `GSETTINGS_BACKEND=prefsd` (the module built
/// beside this executable), on the same private bus, against the same compiled schema.
/// The program is compiled when the benchmark runs (``GIOProgram``); it checks that it
/// reads the value it wrote before it measures.
struct GSettingsBench {
    let quick: Bool

    /// What the C program measures for one backend.
    struct Figures {
        /// µs of `g_settings_backend_get_default`: loading the GIO module, making the backend.
        var backendLoad: Double
        /// µs from `g_settings_new` to the first value read: loading the schema's values.
        var firstRead: Double
        /// Nanoseconds per `g_settings_get_string`, median and 99th percentile of batches.
        var stringP50: Double
        var stringP99: Double
        /// Nanoseconds per `g_settings_get_int`.
        var intP50: Double
        var intP99: Double

        init(backendLoad: Double, firstRead: Double, stringP50: Double, stringP99: Double, intP50: Double, intP99: Double) {
            (self.backendLoad, self.firstRead, self.stringP50, self.stringP99, self.intP50, self.intP99) =
                (backendLoad, firstRead, stringP50, stringP99, intP50, intP99)
        }

        /// Each figure's median over `rounds`.
        init(median rounds: [Figures]) {
            func median(_ figure: (Figures) -> Double) -> Double {
                let sorted = rounds.map(figure).sorted()
                return sorted.isEmpty ? .nan : sorted[sorted.count / 2]
            }
            self.init(
                backendLoad: median(\.backendLoad), firstRead: median(\.firstRead), stringP50: median(\.stringP50), stringP99: median(\.stringP99),
                intP50: median(\.intP50), intP99: median(\.intP99))
        }
    }

    func run() throws {
        let work = try makeTemporaryDirectory("prefs-bench-gsettings")
        defer { try? FileManager.default.removeItem(at: work) }
        let schemas = work.appendingPathComponent("schemas")
        let modules = work.appendingPathComponent("modules")
        for directory in [schemas, modules] { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
        try Self.schema.write(to: schemas.appendingPathComponent("org.example.Bench.gschema.xml"), atomically: true, encoding: .utf8)
        try GIOProgram.check(runCommand("glib-compile-schemas", [schemas.path]), "glib-compile-schemas")
        let module = try Self.module()
        try FileManager.default.createSymbolicLink(at: modules.appendingPathComponent("libgioprefsd.so"), withDestinationURL: module)
        // Helper processes load GIO modules from an empty directory (`helperEnvironment`):
        // dconf's module goes beside prefsd's, or `GSETTINGS_BACKEND=dconf` would find no
        // dconf and GLib would measure its memory backend under dconf's name.
        try DconfGIOModule.link(into: modules)
        // As `make install` does: with the cache, GIO loads the module only when prefsd is
        // the backend chosen (without it, every GIO program would load it at start).
        try GIOProgram.check(runCommand("gio-querymodules", [modules.path]), "gio-querymodules")
        let runner = try GIOProgram.compile(Self.program, named: "gsettings-read", in: work)

        let bus = try PrivateBus()
        defer { bus.stop() }
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }
        let prefsd = try PrefsdInstance(
            executable: try siblingExecutable("prefsd"), bus: bus.address,
            store: work.appendingPathComponent("store"),
            log: work.appendingPathComponent("prefsd.log"), probe: connection)
        defer { prefsd.stop() }
        let dconf = try DconfInstance(bus: bus.address)
        defer { dconf.stop() }
        try dconf.ensureRunning(probe: connection)

        let batches = quick ? 200 : 1000
        let perBatch = 1000
        // The backends take turns, several rounds, so that a change in the machine's load
        // falls on both; each figure is the median of its rounds.
        let rounds = quick ? 1 : 5
        var samples: [String: [Figures]] = [:]
        // A first read happens once per process: each round starts more processes that read
        // once, so that its figures are the medians of many (one process's start is noisy).
        let startsPerRound = quick ? 3 : 10
        var starts: [String: [Figures]] = [:]
        for round in 1...rounds {
            for backend in ["dconf", "prefsd"] {
                let environment = [
                    "DBUS_SESSION_BUS_ADDRESS": bus.address,
                    "GSETTINGS_BACKEND": backend,
                    "GIO_EXTRA_MODULES": modules.path,
                    "GSETTINGS_SCHEMA_DIR": schemas.path,
                    "XDG_CONFIG_HOME": dconf.directory.appendingPathComponent("config").path,
                    "XDG_RUNTIME_DIR": dconf.directory.appendingPathComponent("runtime").path,
                    "HOME": dconf.directory.path,
                ]
                log("GSettings reads with GSETTINGS_BACKEND=\(backend), round \(round) of \(rounds)")
                try GIOProgram.checkBackend(runCommand(runner, ["write"], environment: environment), backend)
                let read = try runCommand(runner, ["read", "\(batches)", "\(perBatch)"], environment: environment, timeout: .seconds(300))
                try GIOProgram.check(read, "\(backend): read")
                samples[backend, default: []].append(try Self.figures(read.stdout, backend))
                for _ in 0..<startsPerRound {
                    let start = try runCommand(runner, ["read", "1", "1"], environment: environment)
                    try GIOProgram.check(start, "\(backend): read once")
                    starts[backend, default: []].append(try Self.figures(start.stdout, backend))
                }
            }
        }
        let results = ["dconf", "prefsd"].map { backend in
            var figures = Figures(median: samples[backend] ?? [])
            let started = Figures(median: (samples[backend] ?? []) + (starts[backend] ?? []))
            (figures.backendLoad, figures.firstRead) = (started.backendLoad, started.firstRead)
            return (backend, figures)
        }
        print(Self.table(results, batches: batches, perBatch: perBatch))
    }

    /// The figures a run of the C program printed.
    private static func figures(_ output: String, _ backend: String) throws -> Figures {
        let numbers = output.split(separator: " ").compactMap { Double($0.trimmingCharacters(in: .whitespacesAndNewlines)) }
        guard numbers.count == 6 else { throw BenchError("\(backend): the reader printed \(output)") }
        return Figures(backendLoad: numbers[0], firstRead: numbers[1], stringP50: numbers[2], stringP99: numbers[3], intP50: numbers[4], intP99: numbers[5])
    }

    /// The GIO module scripts/build-gio-module built: `.build/gio-module/libgioprefsd.so`
    /// above this executable's directory (`$PREFSD_GIO_MODULE` overrides).
    static func module() throws -> URL {
        if let path = ProcessInfo.processInfo.environment["PREFSD_GIO_MODULE"] { return URL(fileURLWithPath: path) }
        var directory = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent()
        while directory.path != "/" {
            let module = directory.appendingPathComponent("gio-module/libgioprefsd.so")
            if FileManager.default.fileExists(atPath: module.path) { return module }
            directory.deleteLastPathComponent()
        }
        throw BenchError("libgioprefsd.so is missing: build it with scripts/build-gio-module")
    }

    static func table(_ results: [(String, Figures)], batches: Int, perBatch: Int) -> String {
        func ns(_ value: Double) -> String { String(format: "%.0f ns", value) }
        var lines = [
            "| GSettings (\(batches) batches × \(perBatch) reads, one C program; reads: median of rounds, start: median of every process) | backend made | first read | `get_string` p50 / p99 | `get_int` p50 / p99 |",
            "| --- | --- | --- | --- | --- |",
        ]
        for (backend, figures) in results {
            lines.append(
                "| GSETTINGS_BACKEND=\(backend) | \(String(format: "%.2f ms", figures.backendLoad / 1000)) | \(String(format: "%.2f ms", figures.firstRead / 1000)) | \(ns(figures.stringP50)) / \(ns(figures.stringP99)) | \(ns(figures.intP50)) / \(ns(figures.intP99)) |"
            )
        }
        if results.count == 2 {
            let (dconf, prefsd) = (results[0].1, results[1].1)
            lines.append("")
            lines.append(
                String(
                    format: "prefsd/dconf p50: get_string %.2f×, get_int %.2f× (target ≤ 1×: at least as fast as dconf)",
                    prefsd.stringP50 / dconf.stringP50, prefsd.intP50 / dconf.intP50))
        }
        return lines.joined(separator: "\n")
    }

    static let schema = """
        <schemalist>
          <schema id="org.example.Bench" path="/org/example/Bench/">
            <key name="name" type="s"><default>'default'</default></key>
            <key name="size" type="i"><default>0</default></key>
          </schema>
        </schemalist>
        """

    /// `gsettings-read write`: stores the values; `gsettings-read read BATCHES PER_BATCH`:
    /// prints the µs of making the backend and of the first read, then ns per read (p50
    /// p99) of get_string and get_int.
    static let program = #"""
        #define G_SETTINGS_ENABLE_BACKEND
        #include <gio/gio.h>
        #include <gio/gsettingsbackend.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <string.h>
        #include <time.h>

        static double now_ns(void) {
            struct timespec t;
            clock_gettime(CLOCK_MONOTONIC, &t);
            return t.tv_sec * 1e9 + t.tv_nsec;
        }

        static int compare(const void *a, const void *b) {
            double x = *(const double *)a, y = *(const double *)b;
            return x < y ? -1 : x > y;
        }

        static void measure(GSettings *s, int string, int batches, int per, double *p50, double *p99) {
            double *samples = malloc(sizeof(double) * batches);
            for (int b = 0; b < batches; b++) {
                double start = now_ns();
                for (int i = 0; i < per; i++) {
                    if (string) g_free(g_settings_get_string(s, "name"));
                    else if (g_settings_get_int(s, "size") != 42) abort();
                }
                samples[b] = (now_ns() - start) / per;
            }
            qsort(samples, batches, sizeof(double), compare);
            *p50 = samples[batches / 2];
            *p99 = samples[(int)(batches * 0.99)];
            free(samples);
        }

        int main(int argc, char **argv) {
            if (argc >= 2 && strcmp(argv[1], "write") == 0) {
                GSettings *s = g_settings_new("org.example.Bench");
                if (!g_settings_set_string(s, "name", "bench-value") || !g_settings_set_int(s, "size", 42)) return 2;
                g_settings_sync();
                g_object_unref(s);
                return 0;
            }
            if (argc < 4) return 64;
            int batches = atoi(argv[2]), per = atoi(argv[3]);
            double start = now_ns();
            GSettingsBackend *backend = g_settings_backend_get_default();
            double backend_us = (now_ns() - start) / 1000;
            start = now_ns();
            GSettings *s = g_settings_new("org.example.Bench");
            gchar *first = g_settings_get_string(s, "name");
            double first_us = (now_ns() - start) / 1000;
            if (strcmp(first, "bench-value") != 0) { fprintf(stderr, "read '%s', not the value written\n", first); return 1; }
            g_free(first);
            for (int i = 0; i < 10000; i++) g_free(g_settings_get_string(s, "name"));
            double s50, s99, i50, i99;
            measure(s, 1, batches, per, &s50, &s99);
            measure(s, 0, batches, per, &i50, &i99);
            printf("%.1f %.1f %.1f %.1f %.1f %.1f\n", backend_us, first_us, s50, s99, i50, i99);
            g_object_unref(s);
            g_object_unref(backend);
            return 0;
        }
        """#
}
