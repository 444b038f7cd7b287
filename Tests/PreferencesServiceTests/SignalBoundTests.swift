import DBus
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

/// Contract 0.2: a `Changed` or `VolatileChanged` body never passes 4 KiB; what does not
/// fit is named in `invalidated`, or `[""]` when even the names do not fit.
@Suite("Signals stay within 4 KiB")
struct SignalBoundTests {
    private let limit = 4096

    @Test("a large value is left out and named in invalidated; small ones of the same commit still travel")
    func largeValueInvalidated() async throws {
        let fixture = try await ServiceFixture()
        let writer = ServiceClient(connection: try fixture.connect())
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: ["com.example.Big"])
        let big = PropertyListValue.data(.init(repeating: 7, count: 1 << 20 - 64))
        try await writer.call(
            "Apply",
            [
                .string("com.example.Big"), ServiceClient.values(["blob": big, "small": .integer(1)]), .stringArray([]),
            ])
        try await writer.write("com.example.Big", "sentinel", .boolean(true))
        try await watcher.wait(for: 2)
        let signals = watcher.signals
        try #require(signals.count == 2)
        #expect(signals[0].changed == ["small": .integer(1)])
        #expect(signals[0].invalidated == ["blob"])
        #expect(signals.allSatisfy { $0.bodyBytes <= limit })
        // What invalidated names is read back whole.
        #expect(try await writer.readValue("com.example.Big", "blob") == big)
        #expect(signals[1].changed == ["sentinel": .boolean(true)] && signals[1].invalidated.isEmpty)
    }

    @Test("a change whose key names do not fit invalidates the whole domain with \"\"")
    func wholeDomainInvalidated() async throws {
        let fixture = try await ServiceFixture()
        let writer = ServiceClient(connection: try fixture.connect())
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: ["com.example.Many"])
        var values: [String: PropertyListValue] = [:]
        for index in 0..<500 { values["a-rather-long-key-name-number-\(index)"] = .integer(Int64(index)) }
        try await writer.call("ReplaceDomain", [.string("com.example.Many"), ServiceClient.values(values)])
        try await writer.call("RemoveDomain", [.string("com.example.Many")])
        try await writer.call("SetVolatileDomain", [.string("com.example.Many"), ServiceClient.values(values)])
        try await writer.call("RemoveVolatileDomain", [.string("com.example.Many")])
        try await writer.write("com.example.Many", "sentinel", .boolean(true))
        try await watcher.wait(for: 5)
        let signals = watcher.signals
        try #require(signals.count == 5)
        #expect(signals.map(\.member) == ["Changed", "Changed", "VolatileChanged", "VolatileChanged", "Changed"])
        for signal in signals.prefix(4) {
            #expect(signal.changed.isEmpty && signal.removed.isEmpty && signal.invalidated == [""])
        }
        #expect(signals.allSatisfy { $0.bodyBytes <= limit })
        #expect(signals[4].changed == ["sentinel": .boolean(true)])
    }

    @Test("values that fit are carried, smallest first, up to the bound")
    func fillsUpToTheBound() async throws {
        let fixture = try await ServiceFixture()
        let writer = ServiceClient(connection: try fixture.connect())
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: ["com.example.Mixed"])
        var values: [String: PropertyListValue] = [:]
        for index in 0..<8 { values["text\(index)"] = .string(String(repeating: "x", count: 1000)) }
        values["tiny"] = .boolean(true)
        try await writer.call("Apply", [.string("com.example.Mixed"), ServiceClient.values(values), .stringArray([])])
        try await watcher.wait(for: 1)
        let signal = try #require(watcher.signals.first)
        #expect(signal.bodyBytes <= limit)
        #expect(signal.changed["tiny"] == .boolean(true))
        #expect(signal.changed.count >= 3, "about three 1 KB strings fit in 4 KiB")
        #expect(Set(signal.changed.keys).union(signal.invalidated) == Set(values.keys))
        #expect(Set(signal.changed.keys).isDisjoint(with: signal.invalidated))
        for (key, value) in signal.changed { #expect(values[key] == value) }
    }
}
