import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport
import Testing

@Suite("Reading and writing through the library")
struct ReadWriteTests {
    @Test("every property-list type and URL, set and read back with the typed getters")
    func types() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Types")
        let date = Date(timeIntervalSince1970: 1_700_000_000)
        preferences.set("text", forKey: "string")
        preferences.set(42, forKey: "int")
        preferences.set(2.5, forKey: "double")
        preferences.set(Float(1.5), forKey: "float")
        preferences.set(true, forKey: "bool")
        preferences.set(Data([1, 2, 3]), forKey: "data")
        preferences.set(date, forKey: "date")
        preferences.set(["a", "b"], forKey: "array")
        preferences.set(["k": 1, "nested": ["x": true]] as [String: Any], forKey: "dictionary")
        preferences.set(URL(string: "https://example.com/x")!, forKey: "url")
        preferences.set(URL(fileURLWithPath: "/tmp/file.txt"), forKey: "fileURL")
        // A read right after a set in the same process sees the new value.
        #expect(preferences.string(forKey: "string") == "text")
        #expect(preferences.synchronize())

        let reader = fixture.preferences("com.example.Types")
        #expect(reader.string(forKey: "string") == "text")
        #expect(reader.integer(forKey: "int") == 42)
        #expect(reader.double(forKey: "double") == 2.5)
        #expect(reader.float(forKey: "float") == 1.5)
        #expect(reader.bool(forKey: "bool"))
        #expect(reader.data(forKey: "data") == Data([1, 2, 3]))
        #expect(reader.object(forKey: "date") as? Date == date)
        #expect(reader.stringArray(forKey: "array") == ["a", "b"])
        #expect(reader.value(forKey: "dictionary") == .dictionary(["k": .integer(1), "nested": .dictionary(["x": .boolean(true)])]))
        #expect(reader.url(forKey: "url") == URL(string: "https://example.com/x"))
        #expect(reader.url(forKey: "fileURL") == URL(fileURLWithPath: "/tmp/file.txt"))
        #expect(reader.object(forKey: "missing") == nil)
        #expect(reader.integer(forKey: "missing") == 0)

        // What the service holds is what was written, with its type.
        let client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.readValue("com.example.Types", "int") == .integer(42))
        #expect(try await client.readValue("com.example.Types", "date") == .date(secondsSince1970: 1_700_000_000))

        preferences.removeObject(forKey: "string")
        #expect(preferences.string(forKey: "string") == nil)
        #expect(preferences.synchronize())
        #expect(await client.refusal("Read", [.string("com.example.Types"), .string("string")]) != nil)
    }

    @Test("coercions through the service, row by row")
    func coercions() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Coerce")
        preferences.set("YES", forKey: "yes")
        preferences.set("3.7", forKey: "real")
        preferences.set(0, forKey: "zero")
        preferences.set(2.9, forKey: "double")
        preferences.set(["x"], forKey: "array")
        #expect(preferences.synchronize())
        #expect(preferences.bool(forKey: "yes"))
        #expect(preferences.integer(forKey: "yes") == 0)
        #expect(preferences.integer(forKey: "real") == 3)
        #expect(preferences.double(forKey: "real") == 3.7)
        #expect(!preferences.bool(forKey: "zero"))
        #expect(preferences.string(forKey: "zero") == "0")
        #expect(preferences.integer(forKey: "double") == 2)
        #expect(preferences.string(forKey: "array") == nil)
        #expect(preferences.dictionary(forKey: "array") == nil)
        #expect(preferences.array(forKey: "array")?.count == 1)
    }

    @Test("async write reports the outcome; a refused write is taken back and synchronize says false")
    func refusedWrite() async throws {
        let fixture = try await ServiceFixture(arguments: ["--max-value-size", "1000"])
        let preferences = fixture.preferences("com.example.Refused")
        try await preferences.write(.string("small"), forKey: "k")
        preferences.set(.data(Data(count: 5000)), forKey: "k")
        #expect(!preferences.synchronize())
        #expect(preferences.string(forKey: "k") == "small", "the previous value is back")
        #expect(preferences.synchronize(), "failures are reported once")
        await #expect(throws: PreferencesError.self) { try await preferences.write(.data(Data(count: 5000)), forKey: "k") }
        do {
            try await preferences.write(.data(Data(count: 5000)), forKey: "k")
        } catch let error where error.refusal?.name == .quotaExceeded {
            #expect(error.message.contains("1000"))
        } catch {
            Issue.record("expected quotaExceeded, got \(error)")
        }
    }

    @Test("dictionaryRepresentation agrees with object(forKey:) for every key")
    func dictionaryRepresentation() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("NSGlobalDomain", "Shared", .string("global"))
        try await client.write("NSGlobalDomain", "Overridden", .string("global"))
        try await client.write("com.example.Rep", "Overridden", .string("app"))
        let preferences = fixture.preferences("com.example.Rep", arguments: ["-Arg", "(1, 2)"], environment: ["LANG": "de_DE.UTF-8"])
        preferences.register(defaults: ["Registered": 5, "Shared": "registered"])
        let representation = preferences.dictionaryRepresentation()
        #expect(Set(representation.keys) == ["Shared", "Overridden", "Arg", "Registered", "AppleLanguages", "AppleLocale"])
        for (key, object) in representation {
            let direct = try #require(preferences.value(forKey: key))
            #expect(try PropertyListValue(foundation: object) == direct, "\(key)")
        }
        #expect(preferences.string(forKey: "Overridden") == "app")
        #expect(preferences.string(forKey: "Shared") == "global")
    }

    @Test("one instance used from many tasks at once")
    func concurrency() async throws {
        let fixture = try await ServiceFixture()
        let preferences = fixture.preferences("com.example.Concurrent")
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<16 {
                group.addTask {
                    for index in 0..<50 {
                        preferences.set(index, forKey: "task\(task)")
                        _ = preferences.integer(forKey: "task\(task)")
                        _ = preferences.dictionaryRepresentation()
                    }
                }
            }
        }
        #expect(preferences.synchronize())
        let client = ServiceClient(connection: try fixture.connect())
        for task in 0..<16 { #expect(try await client.readValue("com.example.Concurrent", "task\(task)") == .integer(49)) }
    }
}
