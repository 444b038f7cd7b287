import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

/// Numbers read back as written: a property list stores a float as the decimal text it
/// prints as (`<real>12.34</real>`), so every process reads 12.34.
@Suite("Numbers and dates read back as written")
struct NumberTests {
    @Test("a Float reads back as its decimal text, in this process and in another")
    func float() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Numbers")
        preferences.set(Float(12.34), forKey: "Float")
        preferences.set(Float(0.1) as Any, forKey: "AnyFloat")
        preferences.set(NSNumber(value: Float(3.3)), forKey: "NSNumber")
        preferences.set([Float(1.1), Float(2.2)], forKey: "Array")
        preferences.set(["Size": NSNumber(value: Float(0.7))], forKey: "Dictionary")
        #expect(preferences.string(forKey: "Float") == "12.34")
        #expect(preferences.float(forKey: "Float") == Float(12.34))
        #expect(preferences.double(forKey: "Float") == 12.34)
        #expect(preferences.synchronize())

        for (key, text) in [("Float", "12.34"), ("AnyFloat", "0.1"), ("NSNumber", "3.3")] {
            #expect(try fixture.probe(["string", "com.example.Numbers", key]).stdout == text + "\n", "\(key)")
        }
        let reader = fixture.preferences("com.example.Numbers")
        #expect(reader.value(forKey: "Array") == .array([.real(1.1), .real(2.2)]))
        #expect(reader.value(forKey: "Dictionary") == .dictionary(["Size": .real(0.7)]))
    }

    @Test("a date reads back within the resolution of a double of seconds since 1970")
    func date() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Dates")
        let date = Date(timeIntervalSince1970: 1_763_900_000.123456)
        preferences.set(date, forKey: "When")
        #expect(preferences.synchronize())
        let read = try #require(fixture.preferences("com.example.Dates").object(forKey: "When") as? Date)
        #expect(abs(read.timeIntervalSince1970 - date.timeIntervalSince1970) < 0.000_000_5)
    }
}
