import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// 64 clients at once lose no write, see every `Changed` of their
    /// domain in commit order, and prefsd's memory stays bounded.
    @Suite("Load")
    struct Load {
        struct ClientFigures: Sendable {
            var writes = 0
            /// Reads answered: a value, or `NotFound` for a domain not written yet.
            var reads = 0
            /// Reads not answered, or answered with anything but a value or `NotFound`.
            var failedReads: [String] = []
            var counter: Int64 = 0
            var latencies: [Double] = []
        }

        @Test("64 clients writing and reading at once: no lost write, every Changed in order")
        func sixtyFourClients() async throws {
            let clients = 64
            let duration = Duration.seconds(Long.pick(12, long: 120))
            let fixture = try await ServiceFixture()
            let baseline = fixture.memory
            let start = ContinuousClock.now
            let deadline = start + duration

            let results = try await withThrowingTaskGroup(of: (Int, ClientFigures, ChangedCollector).self) { group in
                for index in 0..<clients {
                    group.addTask {
                        let domain = "com.example.Load.c\(index)"
                        let connection = try fixture.connect()
                        let collector = try await ChangedCollector(connection: connection, domains: [domain])
                        let client = ServiceClient(connection: connection)
                        var figures = ClientFigures()
                        var random = SystemRandomNumberGenerator()
                        while ContinuousClock.now < deadline {
                            // This client is the only writer of `counter` in its domain.
                            figures.counter += 1
                            let began = ContinuousClock.now
                            try await client.write(domain, "counter", .integer(figures.counter))
                            figures.latencies.append(milliseconds(since: began))
                            figures.writes += 1
                            // Read your own write, and another client's domain.
                            #expect(try await client.readValue(domain, "counter") == .integer(figures.counter))
                            figures.reads += 1
                            let other = "com.example.Load.c\(Int.random(in: 0..<clients, using: &random))"
                            do {
                                _ = try await client.readDomain(other)
                                figures.reads += 1
                            } catch {
                                // Another client may not have written its domain yet: NotFound is an answer.
                                if let error = error as? DBusError, error.isRemote(named: PreferencesErrorName.notFound.busName) {
                                    figures.reads += 1
                                } else {
                                    figures.failedReads.append("ReadDomain \(other): \(error)")
                                }
                            }
                            if figures.counter % 8 == 0 {
                                try await client.write(
                                    domain, "note\(figures.counter % 32)", .string(String(repeating: "n", count: 256) + "\(figures.counter)"))
                                figures.writes += 1
                            }
                        }
                        return (index, figures, collector)
                    }
                }
                var results: [(Int, ClientFigures, ChangedCollector)] = []
                for try await result in group { results.append(result) }
                return results
            }
            let elapsed = milliseconds(since: start) / 1000
            let memory = fixture.memory

            var totalWrites = 0, totalReads = 0, signals = 0, outOfOrder = 0, missing = 0
            var latencies: [Double] = []
            var failedReads: [String] = []
            for (index, figures, collector) in results {
                totalWrites += figures.writes
                totalReads += figures.reads
                failedReads += figures.failedReads
                latencies += figures.latencies
                let domain = "com.example.Load.c\(index)"
                let expected = figures.writes
                try await collector.wait(for: expected)
                let received = collector.signals
                signals += received.count
                #expect(received.allSatisfy { $0.domain == domain }, "a Changed of another domain reached \(domain)")
                let counters = received.compactMap { signal -> Int64? in
                    if case .integer(let number)? = signal.changed["counter"] { return number } else { return nil }
                }
                if counters != Array(1...figures.counter) {
                    outOfOrder += 1
                    missing += max(0, Int(figures.counter) - counters.count)
                    Issue.record("\(domain): counter signals \(counters.prefix(5))… (\(counters.count)), expected 1…\(figures.counter)")
                }
                collector.connection.close()
            }

            // Nothing lost: a restart reads every client's last counter.
            #expect(fixture.stopService() == 0)
            try await fixture.startService()
            let check = ServiceClient(connection: try fixture.connect())
            defer { check.connection.close() }
            var lost = 0
            for (index, figures, _) in results {
                let stored = try await check.readValue("com.example.Load.c\(index)", "counter")
                if stored != .integer(figures.counter) {
                    lost += 1
                    Issue.record("c\(index): counter \(figures.counter) acknowledged, \(stored) stored")
                }
            }
            latencies.sort()
            func percentile(_ p: Double) -> Double { latencies.isEmpty ? 0 : latencies[min(latencies.count - 1, Int(Double(latencies.count) * p))] }
            print(
                "reliability.load clients=\(clients) " + String(format: "seconds=%.1f ", elapsed)
                    + "writes=\(totalWrites) answered_reads=\(totalReads) failed_reads=\(failedReads.count) changed_signals=\(signals) out_of_order_or_missing=\(outOfOrder) lost=\(lost) "
                    + String(format: "writes_per_s=%.0f write_p50=%.1fms write_p99=%.1fms ", Double(totalWrites) / elapsed, percentile(0.5), percentile(0.99))
                    + "baseline_\(baseline.map(\.description) ?? "rss=?") \(memory.map(\.description) ?? "rss=?")")
            #expect(outOfOrder == 0 && missing == 0 && lost == 0)
            #expect(failedReads.isEmpty, "\(failedReads.count) reads not answered: \(failedReads.prefix(3))")
            let loaded = try #require(memory, "prefsd's /proc status cannot be read: it is gone")
            #expect(loaded.peakMiB < 256, "prefsd's peak RSS under load: \(loaded)")
        }
    }
}
