import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

extension Reliability {
    /// SIGKILL at random moments during writes loses no answered write.
    @Suite("Crash safety")
    struct CrashSafety {
        /// What the writers were answered, and the newest value each sent.
        struct Ledger: Sendable {
            /// Keys whose Write (or Apply) was answered, with the value written; each key is
            /// written once, so it must read back exactly.
            var acknowledged: [String: [String: Int64]] = [:]
            /// Per writer: the newest `latest` value answered and the newest one sent.
            var latestAcknowledged: [String: Int64] = [:]
            var latestSent: [String: Int64] = [:]
            var count = 0
        }

        @Test("kill -9 at random moments during writes from several clients loses no acknowledged write")
        func randomKills() async throws {
            let kills = Long.pick(50, long: 500)
            let writerCount = 4
            let fixture = try await ServiceFixture()
            let ledger = Locked(Ledger())
            var generator = SystemRandomNumberGenerator()
            var restartMilliseconds: [Double] = []
            var problems = 0

            for round in 0..<kills {
                let writers = (0..<writerCount).map { writer in
                    Task { await Self.write(fixture: fixture, writer: writer, round: round, ledger: ledger) }
                }
                // A short window so that kills land at every stage: during connect, while
                // batches commit, between commits.
                try await Task.sleep(for: .milliseconds(Int.random(in: 5...120, using: &generator)))
                fixture.killService()
                for writer in writers { writer.cancel(); await writer.value }

                let start = ContinuousClock.now
                try await fixture.startService()
                restartMilliseconds.append(milliseconds(since: start))
                problems += try await Self.verify(fixture: fixture, ledger: ledger, round: round)
                if problems > 20 { break }
            }
            fixture.stopService()
            #expect(fixture.damagedCopies.isEmpty, "a kill damaged the store: \(fixture.storeEntries)")
            #expect(!fixture.log.contains("damaged"), "prefsd reported a damaged store:\n\(fixture.log)")
            let check = try integrityCheck(fixture.storeDirectory.appendingPathComponent("store.sqlite"))
            #expect(check == "ok", "integrity_check after \(kills) kills: \(check)")

            let acknowledged = ledger.withLock { $0.count }
            #expect(acknowledged > kills, "the writers were answered too rarely to mean anything")
            let sortedRestarts = restartMilliseconds.sorted()
            print(
                "reliability.crash kills=\(kills) writers=\(writerCount) acknowledged=\(acknowledged) lost=\(problems) "
                    + String(format: "restart_median=%.0fms restart_max=%.0fms", sortedRestarts[sortedRestarts.count / 2], sortedRestarts.last ?? 0)
                    + " integrity_check=\(check)")
        }

        /// One writer: every call a new key (Write, or Apply of three keys every fifth call)
        /// plus the writer's `latest` key, until the kill makes a call fail.
        static func write(fixture: ServiceFixture, writer: Int, round: Int, ledger: Locked<Ledger>) async {
            guard let connection = try? fixture.connect() else { return }
            defer { connection.close() }
            let client = ServiceClient(connection: connection)
            let domain = "com.example.Crash.w\(writer)"
            var sequence: Int64 = 0
            while !Task.isCancelled {
                sequence += 1
                let value = Int64(round) * 1_000_000 + sequence
                let name = "\(writer)"
                ledger.withLock { $0.latestSent[name] = value }
                do {
                    if sequence % 5 == 0 {
                        let keys = (0..<3).map { "r\(round)-s\(sequence)-\($0)" }
                        var set = Dictionary(uniqueKeysWithValues: keys.map { ($0, PropertyListValue.integer(value)) })
                        set["latest"] = .integer(value)
                        try await client.perform(PreferencesCall.apply(domain, set: set, remove: []))
                        ledger.withLock { ledger in
                            for key in keys { ledger.acknowledged[domain, default: [:]][key] = value }
                            ledger.latestAcknowledged[name] = value
                            ledger.count += 1
                        }
                    } else {
                        let key = "r\(round)-s\(sequence)"
                        try await client.write(domain, key, .integer(value))
                        try await client.write(domain, "latest", .integer(value))
                        ledger.withLock { ledger in
                            ledger.acknowledged[domain, default: [:]][key] = value
                            ledger.latestAcknowledged[name] = value
                            ledger.count += 2
                        }
                    }
                } catch {
                    return
                }
            }
        }

        /// Reads every writer's domain back and counts acknowledged writes that are missing.
        static func verify(fixture: ServiceFixture, ledger: Locked<Ledger>, round: Int) async throws -> Int {
            let connection = try fixture.connect()
            defer { connection.close() }
            let client = ServiceClient(connection: connection)
            let snapshot = ledger.withLock { $0 }
            var problems = 0
            for (domain, keys) in snapshot.acknowledged {
                let stored = try await client.readDomain(domain)
                for (key, value) in keys where stored[key] != .integer(value) {
                    problems += 1
                    Issue.record("after kill \(round + 1): \(domain) \(key) was acknowledged as \(value) but reads \(String(describing: stored[key]))")
                }
                let writer = String(domain.split(separator: "w").last ?? "")
                if let acknowledged = snapshot.latestAcknowledged[writer], let sent = snapshot.latestSent[writer] {
                    // A later write may be durable without its answer; never an older one.
                    guard case .integer(let latest)? = stored["latest"], latest >= acknowledged, latest <= sent else {
                        problems += 1
                        Issue.record(
                            "after kill \(round + 1): \(domain) latest reads \(String(describing: stored["latest"])), acknowledged \(acknowledged), sent \(sent)"
                        )
                        continue
                    }
                }
            }
            return problems
        }
    }
}
