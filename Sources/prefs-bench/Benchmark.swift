import BenchmarkKit
import BusTestSupport
import DBus
import Foundation

/// One run: sets everything up, measures in a fixed order, prints the report.
struct Benchmark {
    let options: PrefsBench

    var quick: Bool { options.quick }

    func run() throws {
        let sizes = options.sizes ?? [0]
        let loadBefore = Machine.load
        let work = try makeTemporaryDirectory("prefs-bench")
        // Foundation's UserDefaults keeps its files under XDG_CONFIG_HOME: keep them in the run's directory.
        setenv("XDG_CONFIG_HOME", work.appendingPathComponent("foundation").path, 1)
        let prefsdPath = try siblingExecutable("prefsd")
        let bus = try PrivateBus()
        var report = Report(machine: Machine.description, quick: quick)
        defer {
            bus.stop()
            try? FileManager.default.removeItem(at: work)
        }
        let connection = try DBusConnection.connect(address: bus.address)
        defer { connection.close() }

        log("private bus \(bus.address)")
        let prefsd = try PrefsdInstance(
            executable: prefsdPath, bus: bus.address,
            store: work.appendingPathComponent("store"),
            log: work.appendingPathComponent("prefsd.log"), probe: connection)
        var prefsdStopped = false
        report.emptyPeakRSS = prefsd.child.peakResidentBytes()
        defer { if !prefsdStopped { prefsd.stop() } }

        if options.onlyRapidWrites {
            log("rapid writes")
            report.rapidWrites = try measureRapidWrites(bus: bus.address, calls: 100_000)
            report.load = "\(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages)"
            return print(report.render())
        }

        if options.onlyCachedReads {
            log("cached reads")
            report.cached = try measureCachedReads(bus: bus.address, quick: quick)
            report.load = "\(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages)"
            return print(report.render())
        }

        // Built before anything is measured: a missing compiler or library stops the run now.
        let programs = try ReferencePrograms(bus: bus.address, directory: work, store: work.appendingPathComponent("store"))

        if options.onlyClientReads {
            try measureClientReads(connection, programs: programs, report: &report)
            report.load = "\(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages)"
            return print(report.render())
        }

        if options.onlyFloor {
            _ = try connection.callBlocking(Calls.write(bigDomain, "probe", 1))
            log("prefsd beside the floor service, through the GDBus reference client")
            report.floor = measureFloor(programs: programs, budget: floorBudget)
            report.load = "\(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages)"
            return print(report.render())
        }

        let dconf = try startDconf(bus: bus.address, connection: connection, report: &report)
        defer { dconf?.stop() }

        // Concurrent writers, on (nearly) empty stores.
        log("concurrent writers")
        let pool = try (0..<64).map { _ in try DBusConnection.connect(address: bus.address) }
        defer { for connection in pool { connection.close() } }
        let seconds = quick ? 1.0 : 3.0
        for writers in [1, 4, 16, 64] {
            let ours = try throughput(Array(pool.prefix(writers)), seconds: seconds) { writer, n in
                Calls.write("bench.conc", "w\(writer)", Int64(writers * 1_000_000 + n))
            }
            var theirs: Double?
            if let dconf {
                try dconf.ensureRunning(probe: connection)
                theirs = try throughput(Array(pool.prefix(writers)), seconds: seconds) { writer, n in
                    Calls.dconfChange([("/bench/conc/w\(writer)", .int32(Int32(writers * 1_000_000 + n)))])
                }
            }
            report.concurrency.append((writers, ours, theirs))
            log("  \(writers) writers: prefsd \(Int(ours))/s, dconf \(theirs.map { "\(Int($0))/s" } ?? "–")")
        }
        _ = try connection.callBlocking(Calls.removeDomain("bench.conc"))
        if let dconf {
            try dconf.ensureRunning(probe: connection)
            _ = try connection.callBlocking(Calls.dconfChange((0..<64).map { ("/bench/conc/w\($0)", nil) }))
        }

        // The size sweep: Read vs Ping, Write vs Ping + fdatasync and dconf's Change.
        let disk = try DiskFloor(directory: work.appendingPathComponent("store"), pattern: .sameBlock)
        let frames = try DiskFloor(directory: work.appendingPathComponent("store"), pattern: .walFrames(pages: 1))
        _ = try connection.callBlocking(Calls.write(bigDomain, "probe", 1))
        var prefsdKeys = 0
        var dconfKeys = 0
        var dconfCapped: Int?
        let dconfDeadline = now() + options.dconfFillSeconds
        var serial: Int64 = 0
        var dconfSerial: Int32 = 0
        for size in sizes {
            log("\(size) keys: filling")
            try fillPrefsd(connection, from: prefsdKeys, to: size)
            prefsdKeys = max(prefsdKeys, size)
            var dconfWrite = Figure.missing(dconf == nil ? "not run" : "")
            if dconf != nil, dconfCapped == nil, size > options.dconfMaxKeys {
                dconfCapped = dconfKeys
                report.notes.append(
                    "dconf is capped at \(dconfKeys) keys (`--dconf-max-keys \(options.dconfMaxKeys)`): it rebuilds and fsyncs its whole database on every change, so filling it to \(size) keys takes minutes (a trial run reached 80,000 keys in 120 s, filling 10,000 keys per change)."
                )
            }
            if let dconf, dconfCapped == nil {
                try dconf.ensureRunning(probe: connection)
                dconfKeys = try fillDconf(connection, from: dconfKeys, to: size, chunk: 10_000, deadline: dconfDeadline)
                if dconfKeys < size {
                    dconfCapped = dconfKeys
                    report.notes.append(
                        "dconf is capped at \(dconfKeys) keys: filling it to \(size) took over \(Int(options.dconfFillSeconds)) s (`--dconf-fill-seconds`).")
                } else {
                    log("\(size) keys: dconf writes")
                    dconfWrite = try measureDconfWrites(
                        connection, budget: quick ? Budget(count: 30, seconds: 3) : Budget(count: 300, seconds: 10),
                        serial: &dconfSerial)
                }
            }
            if let dconfCapped, dconfKeys < size { dconfWrite = .missing("capped at \(dconfCapped)") }
            log("\(size) keys: reads and writes")
            let (ping, read) = try measureReads(
                connection, budget: quick ? Budget(count: 2_000, seconds: 2) : Budget(count: 20_000, seconds: 8))
            let write = try measureWrites(
                connection, disk: disk, frames: frames, budget: quick ? Budget(count: 200, seconds: 2) : Budget(count: 2_000, seconds: 8),
                serial: &serial)
            report.sizes.append(
                SizeResult(
                    keys: size, ping: ping, read: read, write: write, dconfWrite: dconfWrite,
                    dconfKeys: dconf == nil ? nil : dconfKeys))
        }
        report.mainPeakRSS = prefsd.child.peakResidentBytes()
        report.mainKeys = prefsdKeys

        log("Read through the GDBus reference client beside the Swift client")
        report.reference = measureReferenceReads(connection, programs: programs, budget: referenceBudget)

        log("prefsd beside the floor service, through the GDBus reference client")
        report.floor = measureFloor(programs: programs, budget: floorBudget)

        log("cached reads")
        report.cached = try measureCachedReads(bus: bus.address, quick: quick)

        log("rapid writes")
        report.rapidWrites = try measureRapidWrites(bus: bus.address, calls: 100_000)

        log("change propagation")
        report.propagation = try measurePropagation(
            connection, bus: bus.address,
            budget: quick ? Budget(count: 50, seconds: 3) : Budget(count: 500, seconds: 10), directory: work)

        log("cold start")
        prefsd.stop()
        prefsdStopped = true
        report.coldStart = try measureColdStart(
            prefsd: prefsdPath, bus: bus.address, probe: connection,
            directory: work, domains: 1_000, perDomain: 100)

        log("memory")
        // The memory rows start a dconf-service of their own.
        dconf?.stop()
        let memory = try MemoryBench(other: nil, rounds: quick ? 2 : 3).measure(bus: bus.address, probe: connection, work: work)
        report.load = "\(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages)"
        print(report.render())
        print(memory.render())
    }

    /// dconf-service on the bus, or nil with a note saying why not.
    private func startDconf(bus: String, connection: DBusConnection, report: inout Report) throws -> DconfInstance? {
        if options.skipDconf {
            report.notes.append("dconf-service skipped (`--skip-dconf`).")
            return nil
        }
        if !FileManager.default.isExecutableFile(atPath: DconfInstance.executable) && options.installDconf {
            log("installing dconf-service with apt-get")
            let apt = Process()
            apt.executableURL = URL(fileURLWithPath: (try? findExecutable("apt-get")) ?? "/usr/bin/apt-get")
            apt.arguments = ["install", "-y", "--no-install-recommends", "dconf-service"]
            try apt.run()
            apt.waitUntilExit()
        }
        guard FileManager.default.isExecutableFile(atPath: DconfInstance.executable) else {
            report.notes.append("dconf-service is not installed (\(DconfInstance.executable) missing): its columns are empty; `--install-dconf` installs it.")
            return nil
        }
        let dconf = try DconfInstance(bus: bus)
        try dconf.ensureRunning(probe: connection)
        let verifier = try DBusConnection.connect(address: bus)
        defer { verifier.close() }
        report.notes.append("GVariant changeset encoder checked against dconf-service: " + (try dconf.verifyEncoder(connection: verifier)) + ".")
        return dconf
    }
}

/// Progress on standard error, so standard output is only the report.
func log(_ text: String) {
    FileHandle.standardError.write(Data("prefs-bench: \(text)\n".utf8))
}
