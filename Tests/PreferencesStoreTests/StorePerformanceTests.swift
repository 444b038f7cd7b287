import Foundation
import PreferencesModel
import PreferencesStore
import Testing

/// Figures, printed rather than asserted: timings on a shared machine are too noisy to gate on.
@Suite("Store performance figures", .serialized)
struct StorePerformanceTests {
    /// The median time of `count` sequential single-key commits, each waited for.
    func medianCommitLatency(_ store: DomainStore, count: Int) throws -> Duration {
        let clock = ContinuousClock()
        let name = domain("com.example.Latency")
        var samples: [Duration] = []
        for index in 0..<count {
            let elapsed = try clock.measure {
                try store.commitAndWait([.set(name, key: "key\(index % 10)", value: .integer(Int64(index)))]).get()
            }
            samples.append(elapsed)
        }
        return samples.sorted()[count / 2]
    }

    @Test("100,000 rows in 1,000 domains load back whole (commit latency with 0 and 100,000 rows printed, not judged)")
    func writeLatencyAndLoad() throws {
        let temporary = try TemporaryDirectory()
        let store = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        let empty = try medianCommitLatency(store, count: 30)

        // 100,000 keys in 1,000 domains.
        let clock = ContinuousClock()
        let filling = try clock.measure {
            for chunk in 0..<10 {
                var mutations: [StoreMutation] = []
                mutations.reserveCapacity(10_000)
                for index in chunk * 10_000..<(chunk + 1) * 10_000 {
                    let name = domain("com.example.Domain\(index % 1_000)")
                    let value: PropertyListValue = index.isMultiple(of: 2) ? .integer(Int64(index)) : .string("value \(index)")
                    mutations.append(.set(name, key: "key\(index)", value: value))
                }
                try store.commitAndWait(mutations).get()
            }
        }
        let full = try medianCommitLatency(store, count: 30)
        store.close()

        let reopened = try DomainStore(directory: temporary.store, logger: LogRecorder().logger)
        defer { reopened.close() }
        var loaded: [DomainName: [String: PropertyListValue]] = [:]
        let loading = try clock.measure { loaded = try reopened.loadAll() }
        let keys = loaded.values.reduce(0) { $0 + $1.count }
        print("commit latency (median of 30): \(empty) with 0 rows, \(full) with 100,000 rows")
        print("filling 100,000 rows in 10 transactions: \(filling)")
        print("loadAll: \(keys) keys in \(loaded.count) domains in \(loading)")
        #expect(keys == 100_010)
        #expect(loaded.count == 1_001)
    }
}
