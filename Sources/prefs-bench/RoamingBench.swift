import BenchmarkKit
import BusTestSupport
import DBus
import Dispatch
import Foundation
import PreferencesModel
import PreferencesProxy
import PreferencesRoaming
import Synchronization
import SyncthingTestSupport

/// The time from a `Write` on machine A to its `Changed` seen by a client
/// on machine B, through two Syncthing instances on 127.0.0.1 (fs watcher delay 1 s); and
/// how many other machines' changes prefsd applies per second (a file of another machine
/// dropped into the folder, applied per domain as one commit each).
struct RoamingBench {
    var quick: Bool

    func run() throws {
        let loadBefore = Machine.load
        let work = try makeTemporaryDirectory("prefs-bench-roaming")
        defer { try? FileManager.default.removeItem(at: work) }
        let prefsd = try siblingExecutable("prefsd")

        log("starting two Syncthing instances on 127.0.0.1")
        let cluster = try blocking { try await SyncthingCluster(count: 2) }
        defer { cluster.stop() }
        var machines: [(bus: PrivateBus, connection: DBusConnection, prefsd: PrefsdInstance)] = []
        defer {
            for machine in machines { machine.prefsd.stop(); machine.connection.close(); machine.bus.stop() }
        }
        let roamingDomains = [propagationDomain] + (0..<10).map { "bench.roam.\($0)" }
        for (k, instance) in cluster.instances.enumerated() {
            let idFile = instance.home.appendingPathComponent("machine-id")
            try "\(UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased())\n".write(to: idFile, atomically: true, encoding: .utf8)
            let bus = try PrivateBus()
            let connection = try DBusConnection.connect(address: bus.address)
            let instanceOfPrefsd = try PrefsdInstance(
                executable: prefsd, bus: bus.address, store: work.appendingPathComponent("store-\(k)"),
                log: work.appendingPathComponent("prefsd-\(k).log"), probe: connection,
                arguments: ["--roaming-dir", instance.folder.path, "--roaming-machine-id-file", idFile.path])
            machines.append((bus, connection, instanceOfPrefsd))
            _ = try connection.callBlocking(
                PreferencesCall.apply(
                    "io.github.prefsd.Roaming",
                    set: [
                        "Domains": .array(roamingDomains.map { .string($0) }), "MachineName": .string("bench\(k)"),
                    ], remove: []
                ).message)
        }
        let (a, b) = (machines[0], machines[1])

        log("write on A → Changed on B through Syncthing")
        _ = try a.connection.callBlocking(Calls.write(propagationDomain, "p", 0))
        let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
        let budget = quick ? Budget(count: 5, seconds: 30, minimum: 3) : Budget(count: 20, seconds: 120, minimum: 5)
        let child = try Child(
            me, ["--observer-child", "--address", b.bus.address, "--child-count", "\(budget.count + 1)"],
            log: work.appendingPathComponent("observer.log"))
        defer { child.stop(grace: 2) }
        guard child.readLine(timeout: 30) == "ready" else { throw BenchError("the observer child did not start") }
        var value: Int64 = 0
        let latency = try sample(budget) { _ in
            value += 1
            let start = now()
            _ = try a.connection.callBlocking(Calls.write(propagationDomain, "p", value))
            guard let line = child.readLine(timeout: 60), let stamp = Int64(line) else {
                throw BenchError("B did not announce write \(value) within 60 s")
            }
            // The next write only once B has settled (its watcher delay), so samples stay apart.
            usleep(1_200_000)
            return [Double(stamp) * 1e-9 - start]
        }[0]

        log("remote changes applied per second (a machine's file dropped into B's folder)")
        let keysPerDomain = quick ? 200 : 2_000
        let rate = try measureApply(
            into: cluster.instances[1].folder, connection: b.connection,
            domains: Array(roamingDomains.dropFirst()), keysPerDomain: keysPerDomain)

        guard let summary = Summary(latency) else { throw BenchError("no write was timed") }
        print("| what | figure |")
        print("| --- | --- |")
        print(
            "| write on A → `Changed` on B through Syncthing (fs watcher delay 1 s), median of \(summary.count) | \(String(format: "%.2f s", summary.median)) (min \(String(format: "%.2f", summary.minimum)), p99 \(String(format: "%.2f", summary.p99))) |"
        )
        print(
            "| other machines' changes applied, \(rate.changes) keys in \(rate.domains) domains | \(String(format: "%.0f", Double(rate.changes) / rate.seconds)) changes/s (\(String(format: "%.2f", rate.seconds)) s from the file renamed in to the last key readable) |"
        )
        print()
        print("Load: \(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages). \(Machine.description)")
    }

    /// Drops a file of a made-up machine holding `keysPerDomain` keys in each domain into
    /// the folder and times until the last key of every domain reads back.
    private func measureApply(into folder: URL, connection: DBusConnection, domains: [String], keysPerDomain: Int)
        throws -> (changes: Int, domains: Int, seconds: Double)
    {
        let machine = MachineID(derivedFrom: UUID().uuidString)
        var clock = HybridClock()
        var entries: [RoamingEntry] = []
        let wall = UInt64(Date().timeIntervalSince1970 * 1000)
        for domain in domains {
            let name = try DomainName(domain)
            for n in 0..<keysPerDomain {
                entries.append(
                    RoamingEntry(
                        key: RoamingKey(name, "k\(n)"), value: .integer(Int64(n)),
                        stamp: RoamingStamp(time: clock.tick(physical: wall), machine: machine)))
            }
        }
        let bytes = RoamingFile(machine: machine, name: "made-up", entries: entries).encoded()
        let temporary = folder.deletingLastPathComponent().appendingPathComponent("bench-\(machine).tmp")
        try Data(bytes).write(to: temporary)
        let start = now()
        guard rename(temporary.path, folder.appendingPathComponent(RoamingFolder.fileName(for: machine)).path) == 0 else {
            throw BenchError("cannot rename the file into the folder: errno \(errno)")
        }
        var pending = Set(domains)
        while !pending.isEmpty {
            for domain in pending {
                if (try? connection.callBlocking(Calls.read(domain, "k\(keysPerDomain - 1)"))) != nil { pending.remove(domain) }
            }
            if now() - start > 300 { throw BenchError("the changes were not all applied within 300 s") }
            if !pending.isEmpty { usleep(2_000) }
        }
        return (entries.count, domains.count, now() - start)
    }
}

/// Runs async work from the benchmark's synchronous code and waits for it.
func blocking<Value: Sendable>(_ body: @escaping @Sendable () async throws -> Value) throws -> Value {
    let result = Mutex<Result<Value, any Error>?>(nil)
    let done = DispatchSemaphore(value: 0)
    Task {
        do { let value = try await body(); result.withLock { $0 = .success(value) } } catch { result.withLock { $0 = .failure(error) } }
        done.signal()
    }
    done.wait()
    guard let outcome = result.withLock({ $0 }) else { throw BenchError("no result") }
    return try outcome.get()
}
