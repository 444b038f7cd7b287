import DBus
import Dispatch
import Foundation
import PreferencesProtocol
import PrefsdTestSupport
import Synchronization
import Testing

extension Reliability {
    /// The calls prefsd holds while its store loads are bounded by count
    /// and bytes; the excess is refused with `LimitsExceeded` at once, and a flood during a
    /// large store's load leaves prefsd's memory bounded.
    @Suite("Calls held while the store loads")
    struct WaitingBound {
        /// Rows of the seeded store: enough for a debug prefsd to take seconds to load.
        static let rows = 300_000
        /// The flood: 8 connections × 32 calls × 512 KiB = 128 MiB.
        static let (connections, callsPerConnection, callBytes) = (8, 32, 512 << 10)
        /// prefsd holds at most 4 MiB (or 1,000 calls) while loading.
        static let flags = ["--max-waiting-calls", "1000", "--max-waiting-size", "\(4 << 20)"]

        /// prefsd's memory figures, or a failure saying /proc could not be read.
        static func memory(_ fixture: ServiceFixture) throws -> MemoryFigures {
            guard let pid = fixture.pid else { throw FixtureError("prefsd is not running") }
            guard let figures = MemoryFigures(pid: pid) else {
                throw FixtureError("cannot read VmHWM/VmRSS from /proc/\(pid)/status: this test measures memory and needs /proc")
            }
            return figures
        }

        @Test(
            "a 128 MiB flood while a 300,000-key store loads: the excess is refused LimitsExceeded, prefsd's peak memory grows by a few MiB, every call is answered"
        )
        func floodDuringLoad() async throws {
            let fixture = try await ServiceFixture()
            let seed = ServiceClient(connection: try fixture.connect())
            try await seed.write("com.example.Seed", "k", .string(String(repeating: "v", count: 64)))
            seed.connection.close()
            #expect(fixture.stopService() == 0)
            let database = fixture.storeDirectory.appendingPathComponent("store.sqlite").path
            let sql = """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(Self.rows))
                INSERT INTO preference(domain, key, value)
                SELECT 'com.example.Big' || (i % 300), printf('key%08d', i), (SELECT value FROM preference WHERE domain = 'com.example.Seed') FROM n;
                """
            let filled = try runCommand("sqlite3", [database, sql])
            #expect(filled.status == 0, "sqlite3: \(filled.stderr)")

            // The baseline: the same store loaded with nothing waiting.
            var started = ContinuousClock.now
            try await fixture.startService(arguments: Self.flags)
            let probe = ServiceClient(connection: try fixture.connect())
            _ = try await probe.connection.call(
                .methodCall(
                    destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                    member: "Read", body: [.string("com.example.Seed"), .string("k")]
                ), timeout: .seconds(120))
            // A read is answered before the whole store is loaded; Domains waits for all of it.
            _ = try await probe.connection.call(
                .methodCall(
                    destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                    member: "Domains", body: []
                ), timeout: .seconds(120))
            let loadMilliseconds = milliseconds(since: started)
            let baseline = try Self.memory(fixture)
            probe.connection.close()
            #expect(fixture.stopService() == 0)

            // Again, flooded from the moment prefsd owns its name (before its store is loaded).
            started = ContinuousClock.now
            try await fixture.startService(arguments: Self.flags)
            let outcomes = Mutex<[String: Int]>([:])
            let answered = DispatchSemaphore(value: 0)
            var flooders: [DBusConnection] = []
            let payload = DBusValue.variant(.bytes(Array(repeating: 0x5a, count: Self.callBytes)))
            for connectionIndex in 0..<Self.connections {
                let connection = try fixture.connect()
                flooders.append(connection)
                for index in 0..<Self.callsPerConnection {
                    connection.call(
                        .methodCall(
                            destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                            member: "Write", body: [.string("com.example.Flood"), .string("c\(connectionIndex)-\(index)"), payload]
                        ), timeout: .seconds(120)
                    ) { result in
                        let outcome: String
                        switch result {
                        case .success: outcome = "stored"
                        case .failure(let error) where error.code == .remote: outcome = error.name ?? ""
                        case .failure(let error): outcome = "\(error)"
                        }
                        outcomes.withLock { $0[outcome, default: 0] += 1 }
                        answered.signal()
                    }
                }
            }
            let sent = Self.connections * Self.callsPerConnection
            let all = await Task.detached {
                (0..<sent).allSatisfy { _ in answered.wait(timeout: .now() + 180) == .success }
            }.value
            #expect(all, "not every call of the flood was answered")
            // The sentinel: prefsd has loaded and answers.
            let after = ServiceClient(connection: try fixture.connect())
            defer { after.connection.close() }
            #expect(try await after.readValue("com.example.Seed", "k") == .string(String(repeating: "v", count: 64)))
            let flooded = try Self.memory(fixture)
            let elapsed = milliseconds(since: started)
            for connection in flooders { connection.close() }

            let counts = outcomes.withLock { $0 }
            let refused = counts[StandardErrorName.limitsExceeded] ?? 0
            let stored = counts["stored"] ?? 0
            // Calls that arrive once the store is loaded are served: past the 64 MiB domain
            // limit they are refused QuotaExceeded.
            let overQuota = counts[PreferencesErrorName.quotaExceeded.busName] ?? 0
            #expect(
                refused > 0, "no call was refused: the flood did not arrive while the store loaded (load took \(Int(loadMilliseconds)) ms); answers: \(counts)")
            #expect(stored + refused + overQuota == sent, "answers other than success, LimitsExceeded or QuotaExceeded: \(counts)")
            let grownMiB = Double(flooded.peakKiB - baseline.peakKiB) / 1024
            let floodMiB = Double(sent * Self.callBytes) / Double(1 << 20)
            #expect(grownMiB < 48, "prefsd's peak memory grew by \(grownMiB) MiB with a \(floodMiB) MiB flood (baseline \(baseline), flooded \(flooded))")
            print(
                String(
                    format:
                        "reliability.waiting rows=%d load_ms=%d flood_mib=%.0f calls=%d stored=%d refused=%d baseline_peak_mib=%.1f flooded_peak_mib=%.1f grown_mib=%.1f elapsed_ms=%d",
                    Self.rows, Int(loadMilliseconds), floodMiB, sent, stored, refused, baseline.peakMiB, flooded.peakMiB, grownMiB, Int(elapsed)))
            #expect(fixture.stopService() == 0)

            // The count bound: 400 small calls against --max-waiting-calls 10.
            try await fixture.startService(arguments: ["--max-waiting-calls", "10"])
            let small = try fixture.connect()
            defer { small.close() }
            let smallOutcomes = Mutex<[String: Int]>([:])
            let smallAnswered = DispatchSemaphore(value: 0)
            for index in 0..<400 {
                small.call(
                    .methodCall(
                        destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                        member: "Write", body: [.string("com.example.Small"), .string("k\(index)"), .variant(.int32(Int32(index)))]
                    ), timeout: .seconds(120)
                ) { result in
                    let outcome: String
                    switch result {
                    case .success: outcome = "stored"
                    case .failure(let error) where error.code == .remote:
                        outcome = (error.name ?? "") + (error.message.contains("--max-waiting-calls") ? " (names the flag)" : "")
                    case .failure(let error): outcome = "\(error)"
                    }
                    smallOutcomes.withLock { $0[outcome, default: 0] += 1 }
                    smallAnswered.signal()
                }
            }
            let allSmall = await Task.detached {
                (0..<400).allSatisfy { _ in smallAnswered.wait(timeout: .now() + 180) == .success }
            }.value
            #expect(allSmall, "not every small call was answered")
            let smallCounts = smallOutcomes.withLock { $0 }
            let smallRefused = smallCounts[StandardErrorName.limitsExceeded + " (names the flag)"] ?? 0
            #expect(smallRefused > 0, "no small call was refused past --max-waiting-calls 10: \(smallCounts)")
            #expect(smallRefused + (smallCounts["stored"] ?? 0) == 400, "\(smallCounts)")
            print("reliability.waiting max_waiting_calls=10 calls=400 stored=\(smallCounts["stored"] ?? 0) refused=\(smallRefused)")
            fixture.stopService()
        }
    }
}
