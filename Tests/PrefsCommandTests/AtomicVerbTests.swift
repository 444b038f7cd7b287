import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

@Suite("prefs read-modify-write verbs are atomic")
struct AtomicVerbTests {
    @Test("-array-add and -dict-add from concurrent processes lose no item")
    func concurrentAdds() async throws {
        let fixture = try await ServiceFixture()
        let writers = 3, items = 8
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                group.addTask {
                    for item in 0..<items {
                        expectSuccess(try fixture.prefs("write", "com.example.Shared", "List", "-array-add", "w\(writer)-\(item)"))
                        expectSuccess(try fixture.prefs("write", "com.example.Shared", "Map", "-dict-add", "w\(writer)-\(item)", "-int", "\(item)"))
                    }
                }
            }
            try await group.waitForAll()
        }
        let client = ServiceClient(connection: try fixture.connect())
        guard case .array(let list) = try await client.readValue("com.example.Shared", "List"),
            case .dictionary(let map) = try await client.readValue("com.example.Shared", "Map")
        else {
            Issue.record("List or Map has the wrong type")
            return
        }
        #expect(list.count == writers * items)
        #expect(map.count == writers * items)
    }

    @Test("rename moves the value in one change and refuses a missing key")
    func rename() async throws {
        let fixture = try await ServiceFixture()
        expectSuccess(try fixture.prefs("write", "com.example.R", "Old", "-int", "5"))
        expectSuccess(try fixture.prefs("rename", "com.example.R", "Old", "New"))
        let read = try fixture.prefs("read", "com.example.R")
        #expect(read.stdout.contains("New = 5") && !read.stdout.contains("Old"))
        #expect(try fixture.prefs("rename", "com.example.R", "Old", "Other").status == 1)
    }
}
