import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

/// A `Changed` signal carries at most 4 KiB: larger values are left out (`invalidated`) and
/// the library reads them again, so getters, observers, notifications and `synchronize()`
/// behave as with small values.
@Suite("Values a signal leaves out")
struct LeftOutValuesTests {
    static let big = String(repeating: "ab", count: 4096)  // 8 KiB: never inside a signal

    @Test("a large value written elsewhere reaches the getter and the observer, and later changes still do")
    func observed() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Large")
        let seen = Locked<[String: PropertyListValue?]>([:])
        let observations = ["Big", "Small"].map { key in
            preferences.observe(key) { value in seen.withLock { $0[key] = .some(value) } }
        }
        let client = ServiceClient(connection: try fixture.connect())
        try await client.call(
            "Apply",
            [
                .string("com.example.Large"), ServiceClient.values(["Big": .string(Self.big), "Tiny": .integer(1)]), .stringArray([]),
            ])
        #expect(await eventually { seen.withLock { $0["Big"] } == .some(.string(Self.big)) })
        #expect(preferences.string(forKey: "Big") == Self.big)
        #expect(preferences.integer(forKey: "Tiny") == 1)
        try await client.write("com.example.Large", "Small", .integer(2))
        #expect(await eventually { seen.withLock { $0["Small"] } == .some(.integer(2)) }, "the domain is still followed")
        _ = observations
    }

    @Test("after synchronize(), a large value another client wrote shows")
    func synchronized() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.LargeSync")
        #expect(preferences.string(forKey: "Big") == nil)
        let client = ServiceClient(connection: try fixture.connect())
        for round in 1...20 {
            let value = "\(round)" + Self.big
            try await client.write("com.example.LargeSync", "Big", .string(value))
            #expect(preferences.synchronize())
            #expect(preferences.string(forKey: "Big") == value, "round \(round)")
        }
    }
}
