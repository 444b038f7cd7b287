import BenchmarkKit
import BusTestSupport
import DBus
import Foundation
import PreferencesProtocol
import ProcessMemory

/// prefsd's memory beside the least its dependencies cost: each service started afresh and
/// left to settle, then given one durable `Write`, its resident memory read from
/// /proc/PID/smaps once it is idle again and how often it is woken after that
/// (``idleSample(_:of:pid:executable:)``), and the most it held at any moment since its
/// start (its start, the write); several rounds, taking turns. Beside prefsd (and
/// another build, `--compare-prefsd`): the Swift floor (prefs-bench-floor: libdbus, GRDB,
/// the Swift runtime and Foundation linked as prefsd is, nothing else), the store floor (the
/// same in C on libdbus and SQLite) and dconf-service, when installed.
struct MemoryBench {
    /// Another prefsd executable to measure in the same rounds, or `nil`.
    var other: String?
    /// Starts of each service.
    var rounds: Int

    /// The Swift floor's bus name.
    static let swiftFloorName = "io.github.prefsd.BenchSwiftFloor"

    func run() throws {
        let loadBefore = Machine.load
        let work = try makeTemporaryDirectory("prefs-bench-memory")
        defer { try? FileManager.default.removeItem(at: work) }
        let bus = try PrivateBus()
        defer { bus.stop() }
        let probe = try DBusConnection.connect(address: bus.address)
        defer { probe.close() }
        let table = try measure(bus: bus.address, probe: probe, work: work)
        print(table.render())
        print()
        print("Load: \(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages). \(Machine.description)")
    }

    /// Measures every service `rounds` times on the bus at `bus`, in `work`.
    func measure(bus: String, probe: DBusConnection, work: URL) throws -> MemoryTable {
        let prefsdPath = try siblingExecutable("prefsd")
        var services = [try prefsd(prefsdPath, what: "prefsd")]
        if let other { services.append(try prefsd(other, what: "prefsd (\(other))", kind: .other)) }
        services.append(prefsdDconf(prefsdPath, what: "prefsd --dconf", kind: .prefsdDconf))
        if let other { services.append(prefsdDconf(other, what: "prefsd --dconf (\(other))", kind: .other)) }
        services.append(try swiftFloor(try siblingExecutable("prefs-bench-floor")))
        do {
            services.append(try storeFloor(work: work))
        } catch {
            log("the store floor is left out: \(error)")
        }
        if FileManager.default.isExecutableFile(atPath: DconfInstance.executable) { services.append(dconf()) }

        var samples = Array(repeating: [IdleSample](), count: services.count)
        for round in 0..<rounds {
            let order = round % 2 == 0 ? Array(services.indices) : Array(services.indices.reversed())
            for index in order {
                let directory = work.appendingPathComponent("round-\(round)-\(index)")
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
                samples[index].append(try services[index].sample(bus, probe, directory))
            }
            log(
                "round \(round + 1): "
                    + services.indices.map { "\(services[$0].what) \(samples[$0].last.map { mebibytes($0.memory.total) } ?? "–")" }.joined(
                        separator: ", "))
        }
        return MemoryTable(
            rows: services.indices.map { index in
                MemoryTable.Row(
                    what: services[index].what, kind: services[index].kind, samples: samples[index],
                    stripped: strippedSize(services[index].executable))
            })
    }

    /// One service to measure: what it is, its executable, and how to take a sample of it.
    private struct Service {
        var what: String
        var kind: MemoryTable.Kind = .other
        var executable: String
        /// Starts the service on the bus with its files in the directory, makes one durable
        /// `Write`, reads its memory and counts its wakeups, and stops it.
        var sample: (String, DBusConnection, URL) throws -> IdleSample
    }

    private func prefsd(_ executable: String, what: String, kind: MemoryTable.Kind = .prefsd) throws -> Service {
        Service(what: what, kind: kind, executable: executable) { bus, probe, directory in
            let started = now()
            let instance = try PrefsdInstance(
                executable: executable, bus: bus, store: directory.appendingPathComponent("store"),
                log: directory.appendingPathComponent("prefsd.log"), probe: probe)
            defer { instance.stop() }
            return try writeOnce(probe, to: PreferencesBus.busName, pid: instance.child.pid, executable: executable, started: started)
        }
    }

    /// prefsd serving dconf's protocol, with dconf's directories of its own in the round's
    /// directory; its first write is a dconf `Change`, as dconf-service's is.
    private func prefsdDconf(_ executable: String, what: String, kind: MemoryTable.Kind) -> Service {
        Service(what: what, kind: kind, executable: executable) { bus, probe, directory in
            let started = now()
            let home = directory.appendingPathComponent("home")
            try DconfInstance.makeHome(home)
            let instance = try PrefsdInstance(
                executable: executable, bus: bus, store: directory.appendingPathComponent("store"),
                log: directory.appendingPathComponent("prefsd.log"), probe: probe, arguments: ["--dconf"],
                environment: ProcessInfo.processInfo.environment.merging(DconfInstance.xdgEnvironment(home)) { $1 })
            defer { instance.stop() }
            try DconfBench.waitForDconfName(probe)
            settle(since: started)
            _ = try probe.callBlocking(Calls.dconfChange([("/bench/memory", .int32(1))]))
            return try idleSample(probe, of: Calls.dconfName, pid: instance.child.pid, executable: executable)
        }
    }

    private func swiftFloor(_ executable: String) throws -> Service {
        Service(what: "the Swift floor (prefs-bench-floor)", kind: .swiftFloor, executable: executable) { bus, probe, directory in
            let started = now()
            let floor = try FloorInstance(
                executable,
                [
                    bus, Self.swiftFloorName, PreferencesBus.objectPath, PreferencesBus.interface,
                    directory.appendingPathComponent("floor.sqlite").path,
                ],
                log: directory.appendingPathComponent("swift-floor.log"), what: "the Swift floor")
            defer { floor.stop() }
            return try writeOnce(probe, to: Self.swiftFloorName, pid: floor.pid, executable: executable, started: started)
        }
    }

    private func storeFloor(work: URL) throws -> Service {
        let executable = try compileCProgram(
            try storeFloorCSource(), named: StoreFloorService.executableName, in: work,
            library: StoreFloorService.libraries, package: StoreFloorService.packages)
        return Service(what: "the store floor (C)", executable: executable) { bus, probe, directory in
            let started = now()
            let floor = try FloorInstance(
                executable,
                StoreFloorService.arguments(
                    address: bus, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                    database: directory.appendingPathComponent("store-floor.sqlite").path),
                log: directory.appendingPathComponent("store-floor.log"), what: "the store floor")
            defer { floor.stop() }
            return try writeOnce(probe, to: StoreFloorService.busName, pid: floor.pid, executable: executable, started: started)
        }
    }

    private func dconf() -> Service {
        Service(what: "dconf-service", kind: .dconfService, executable: DconfInstance.executable) { bus, probe, _ in
            let started = now()
            let dconf = try DconfInstance(bus: bus)
            defer { dconf.stop() }
            try dconf.ensureRunning(probe: probe)
            settle(since: started)
            _ = try probe.callBlocking(Calls.dconfChange([("/bench/memory", .int32(1))]))
            guard let pid = dconf.pid else { throw BenchError("dconf-service is not running") }
            return try idleSample(probe, of: Calls.dconfName, pid: pid, executable: DconfInstance.executable)
        }
    }
}

/// Once the service started at `started` has settled, makes one durable `Write` to it at
/// `name` and returns its memory and wakeups once idle again: those of a service in use,
/// its write path included.
private func writeOnce(
    _ probe: DBusConnection, to name: String, pid: Int32, executable: String, started: Double
) throws -> IdleSample {
    settle(since: started)
    var write = Calls.write("bench.memory", "key", 1)
    write.destination = name
    _ = try probe.callBlocking(write)
    return try idleSample(probe, of: name, pid: pid, executable: executable)
}

/// How long after its start a service is left before it is measured: prefsd gives back what
/// its start used two seconds after its store is loaded.
private let settlingTime = 4.0

/// Waits until ``settlingTime`` has passed since `started`.
private func settle(since started: Double) {
    let pause = started + settlingTime - now()
    if pause > 0 { usleep(useconds_t(pause * 1_000_000)) }
}

/// The memory of `pid` once idle: after a `Peer.Ping` to `name`, half a second (for work a
/// service does after its reply, such as a checkpoint) and another `Peer.Ping`; then how
/// often it is woken in the next ``wakeupWindow`` seconds, with no call made to it.
private func idleSample(_ probe: DBusConnection, of name: String, pid: Int32, executable: String) throws -> IdleSample {
    _ = try probe.callBlocking(Calls.ping(name))
    usleep(500_000)
    _ = try probe.callBlocking(Calls.ping(name))
    let memory = try ResidentMemory(pid: pid, executable: executable)
    guard let peak = procStatus("/proc/\(pid)/status").flatMap({ procStatusNumber("VmHWM", in: $0) }) else {
        throw BenchError("cannot read /proc/\(pid)/status: the process has exited")
    }
    let before = contextSwitches(pid)
    usleep(useconds_t(wakeupWindow * 1_000_000))
    let after = contextSwitches(pid)
    // A thread started in the window counts whole; one that ended in it is not counted.
    let woken = after.reduce(0) { $0 + $1.value - (before[$1.key] ?? 0) }
    return IdleSample(memory: memory, peak: peak * 1024, wakeups: Double(woken) / wakeupWindow)
}

/// Seconds over which an idle service's wakeups are counted.
private let wakeupWindow = 3.0

/// What one start of a service gave: its memory, idle after one write, the most it held
/// resident before (`VmHWM`, in bytes: its start's peak or the write's), and its wakeups per
/// second after that.
struct IdleSample {
    var memory: ResidentMemory
    var peak: Int
    var wakeups: Double
}

/// The context switches (voluntary and not) of each thread of `pid` so far, by thread:
/// each is a time the thread was taken off the processor, most of them to sleep until woken.
private func contextSwitches(_ pid: Int32) -> [String: Int] {
    let tasks = "/proc/\(pid)/task"
    var switches: [String: Int] = [:]
    for task in (try? FileManager.default.contentsOfDirectory(atPath: tasks)) ?? [] {
        guard let status = procStatus("\(tasks)/\(task)/status") else { continue }
        switches[task] =
            (procStatusNumber("voluntary_ctxt_switches", in: status) ?? 0) + (procStatusNumber("nonvoluntary_ctxt_switches", in: status) ?? 0)
    }
    return switches
}

/// The size of `executable` stripped of its symbols and debugging sections (`strip -o`), in
/// bytes, or nil when `strip` is missing or fails.
private func strippedSize(_ executable: String) -> Int? {
    guard let strip = try? findExecutable("strip") else { return nil }
    let copy = NSTemporaryDirectory() + "prefs-bench-stripped-\(getpid())"
    defer { try? FileManager.default.removeItem(atPath: copy) }
    guard let run = try? runCommand(strip, ["-o", copy, executable]), run.status == 0 else { return nil }
    return (try? FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int) ?? nil
}

/// `bytes` in MiB with one decimal.
private func mebibytes(_ bytes: Int) -> String {
    "\(Format.format1(Double(bytes) / 1_048_576)) MiB"
}

/// The memory rows: each service's samples and its stripped size, rendered as Markdown, and
/// each prefsd row beside its targets.
struct MemoryTable {
    /// What a row is, for the lines comparing prefsd with dconf-service and the Swift floor.
    enum Kind {
        case prefsd, prefsdDconf, swiftFloor, dconfService, other
    }

    struct Row {
        var what: String
        var kind: Kind
        var samples: [IdleSample]
        var stripped: Int?
    }

    var rows: [Row]

    /// How far above dconf-service's median RSS prefsd's worst start may lie.
    static let residentAboveDconf = 4 * 1_048_576
    /// The most private memory prefsd's worst start may hold.
    static let privateLimit = 8 * 1_048_576
    /// The most prefsd's stripped executable may weigh.
    static let strippedLimit = 32_900_000
    /// How far above dconf-service's median peak prefsd's worst peak may lie: what the
    /// whole GNOME session's summed peak may add (scripts/gnome-session-bench), all of
    /// which is the service's own.
    static let peakAboveDconf = 5 * 1_048_576

    func render() -> String {
        var table = MarkdownTable(header: [
            "service, idle after one durable write", "RSS, p50 (worst)", "private: anonymous + own executable, p50 (worst)",
            "its own executable's pages", "shared libraries", "heap, stacks and other anonymous memory", "executable, stripped",
            "peak since the start, p50 (worst)", "wakeups/s idle, p50 (min–max)", "starts",
        ])
        for row in rows {
            func median(_ part: (ResidentMemory) -> Int) -> String {
                Summary(row.samples.map { Double(part($0.memory)) }).map { mebibytes(Int($0.median)) } ?? "–"
            }
            func worst(_ part: (ResidentMemory) -> Int) -> String {
                mebibytes(row.samples.map { part($0.memory) }.max() ?? 0)
            }
            let peaks = row.samples.map(\.peak)
            let peak = Summary(peaks.map(Double.init)).map { "\(mebibytes(Int($0.median))) (\(mebibytes(peaks.max() ?? 0)))" }
            let wakeups = row.samples.map(\.wakeups)
            let woken = Summary(wakeups).map {
                "\(Format.format1($0.median)) (\(Format.format1(wakeups.min() ?? 0))–\(Format.format1(wakeups.max() ?? 0)))"
            }
            table.add([
                row.what, "\(median(\.total)) (\(worst(\.total)))", "\(median(\.privatePages)) (\(worst(\.privatePages)))",
                median(\.executable), median(\.libraries), median(\.other),
                row.stripped.map { "\(Format.format1(Double($0) / 1_000_000)) MB" } ?? "–", peak ?? "–", woken ?? "–",
                "\(row.samples.count)",
            ])
        }
        var text = table.render()
        let dconfRow = rows.first { $0.kind == .dconfService }
        let dconf = dconfRow.flatMap { Summary($0.samples.map { Double($0.memory.total) }) }
        let dconfPeak = dconfRow.flatMap { Summary($0.samples.map { Double($0.peak) }) }
        let floor = rows.first { $0.kind == .swiftFloor }
        for row in rows where row.kind == .prefsd || row.kind == .prefsdDconf {
            guard let worstTotal = row.samples.map(\.memory.total).max(), let worstPrivate = row.samples.map(\.memory.privatePages).max()
            else { continue }
            var parts: [String] = []
            if let dconf {
                let limit = Int(dconf.median) + Self.residentAboveDconf
                parts.append(
                    "RSS, worst start \(mebibytes(worstTotal)) ≤ dconf-service's \(mebibytes(Int(dconf.median))) + 4 MiB: \(verdict(worstTotal, limit))")
            }
            var privatePart = "private, worst start \(mebibytes(worstPrivate)) ≤ 8 MiB: \(verdict(worstPrivate, Self.privateLimit))"
            if let floorPrivate = floor.flatMap({ Summary($0.samples.map { Double($0.memory.privatePages) }) }) {
                privatePart += " (the Swift floor's \(mebibytes(Int(floorPrivate.median))))"
            }
            parts.append(privatePart)
            if let dconfPeak, let worstPeak = row.samples.map(\.peak).max() {
                let limit = Int(dconfPeak.median) + Self.peakAboveDconf
                parts.append(
                    "peak, worst start \(mebibytes(worstPeak)) ≤ dconf-service's \(mebibytes(Int(dconfPeak.median))) + 5 MiB: \(verdict(worstPeak, limit))")
            }
            if row.kind == .prefsd, let stripped = row.stripped {
                parts.append("stripped \(Format.format1(Double(stripped) / 1_000_000)) MB ≤ 32.9 MB: \(verdict(stripped, Self.strippedLimit))")
            }
            text += "\n\(row.what): " + parts.joined(separator: "; ") + "."
        }
        return text + "\n"
    }

    /// "met" or "**missed**".
    private func verdict(_ value: Int, _ limit: Int) -> String {
        value <= limit ? "met" : "**missed**"
    }
}

extension ResidentMemory {
    /// Reads /proc/`pid`/smaps; `program` is the path the process was started from.
    init(pid: Int32, executable program: String) throws {
        guard let smaps = ProcessMemory.readProcFile("/proc/\(pid)/smaps") else {
            throw BenchError("cannot read /proc/\(pid)/smaps: the process has exited")
        }
        self.init(smaps: smaps, executablePath: URL(fileURLWithPath: program).resolvingSymlinksInPath().path)
    }
}
