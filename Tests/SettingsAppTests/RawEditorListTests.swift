import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// Arrays and dictionaries in the raw editor read as lists, one item per line.
@Suite("The raw editor's lists, driven through AT-SPI", .serialized)
struct RawEditorListTests {
    @Test("an array and a dictionary show one item per line; an edited list is saved with Apply")
    func lists() async throws {
        let fixture = try await ServiceFixture()
        let session = try SettingsWindowSession(fixture: fixture)
        #expect(try session.prefs(["write", "com.example.Other", "Recent", "-array", "notes.txt", "todo.txt"]).status == 0)
        #expect(try session.prefs(["write", "com.example.Other", "Sizes", "-dict", "width", "-int", "640", "height", "-int", "480"]).status == 0)
        try session.launch("com.example.Other")

        var step = try session.drive(["wait", "text", "Recent", "--text", "(\n    \"notes.txt\",\n    \"todo.txt\"\n)"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        step = try session.drive(["wait", "text", "Sizes", "--text", "{\n    height = 480;\n    width = 640;\n}"])
        #expect(step.succeeded, "\(step.output)")

        step = try session.drive(["set-text", "text", "Recent", "(\n    \"notes.txt\",\n    \"todo.txt\",\n    \"ideas.txt\"\n)"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Apply Recent", "click"])
        #expect(step.succeeded, "\(step.output)")
        let deadline = ContinuousClock.now + .seconds(20)
        var stored = ""
        while ContinuousClock.now < deadline {
            stored = try session.prefs(["read", "com.example.Other", "Recent"]).stdout
            if stored.contains("ideas.txt") { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(stored.contains("ideas.txt"), "\(stored)\n\(session.appLog)")
    }
}
