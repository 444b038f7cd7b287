import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

/// A window saving its size on every resize: set is answered at once, and the sets of a
/// domain made while one write is in flight reach prefsd merged into one Apply.
@Suite("Rapid writes are kind to the disk")
struct RapidWriteTests {
    @Test("100,000 sets of one key reach the disk merged, in at most a tenth as many commits, the last value durable")
    func coalesced() async throws {
        let fixture = try await ServiceFixture()
        let collector = try await ChangedCollector(connection: try fixture.connect(), domains: ["com.example.Window"])
        let preferences = fixture.preferences("com.example.Window")
        let calls = 100_000
        let start = ContinuousClock.now
        for width in 1...calls {
            preferences.set(width, forKey: "Width")
            if width.isMultiple(of: 1000), preferences.integer(forKey: "Width") != width {
                Issue.record("set \(width) did not show at once")
                break
            }
        }
        #expect(preferences.synchronize())
        let elapsed = ContinuousClock.now - start
        let client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.readValue("com.example.Window", "Width") == .integer(Int64(calls)))
        // Sentinel: once its signal is in, every earlier one is.
        try await client.write("com.example.Window", "Sentinel", .integer(1))
        try await collector.wait(for: 1)
        #expect(await eventually { collector.signals.last?.changed["Sentinel"] != nil })
        let commits = collector.signals.count - 1
        print("rapid writes: calls=\(calls) commits=\(commits) seconds=\(elapsed)")
        #expect(commits >= 1)
        // Unmerged, each set would be a commit; merged, a few hundred on a quiet machine (the
        // count printed above). A tenth leaves room for a machine where prefsd keeps pace with the sets.
        #expect(commits <= calls / 10, "\(commits) commits for \(calls) calls in \(elapsed)")
        #expect(collector.signals.dropLast().last?.changed["Width"] == .integer(Int64(calls)))
    }

    @Test("a refused merged Apply takes its values back and synchronize() says false")
    func refusedBatch() async throws {
        // A domain of at most 4 KiB: the first values fit, the later ones are refused.
        let fixture = try await ServiceFixture(arguments: ["--max-domain-size", "4096"])
        let preferences = fixture.preferences("com.example.Small")
        let text = String(repeating: "x", count: 200)
        for index in 0..<100 { preferences.set(text, forKey: "Key\(index)") }
        #expect(preferences.string(forKey: "Key99") == text, "shown at once")
        #expect(!preferences.synchronize())
        let client = ServiceClient(connection: try fixture.connect())
        let stored = try await client.readDomain("com.example.Small")
        #expect(stored.count < 100)
        // This process shows what prefsd holds: every refused value was taken back.
        for index in 0..<100 {
            let key = "Key\(index)"
            #expect(preferences.string(forKey: key) == (stored[key] == nil ? nil : text), "\(key)")
        }
        #expect(preferences.synchronize(), "the failure is reported once")
    }

    @Test("one value refused inside a merged batch does not take the others with it")
    func oneBadValue() async throws {
        let fixture = try await ServiceFixture(arguments: ["--max-value-size", "1024"])
        let preferences = fixture.preferences("com.example.Batch")
        preferences.set("first", forKey: "First")  // sent at once, alone
        preferences.set("small", forKey: "Before")  // these wait for it, merged
        preferences.set(String(repeating: "x", count: 4000), forKey: "Big")
        preferences.set("small", forKey: "After")
        #expect(!preferences.synchronize(), "the value over the limit is reported")
        #expect(preferences.string(forKey: "Big") == nil, "and taken back")
        let client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.readDomain("com.example.Batch") == ["First": .string("first"), "Before": .string("small"), "After": .string("small")])
        #expect(preferences.string(forKey: "Before") == "small" && preferences.string(forKey: "After") == "small")
    }
}
