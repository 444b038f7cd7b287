import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// What an administrator's defaults and dconf system databases change of what a user reads
/// is noted in the history (who = `managed`), as a managed file's change is
/// (`HistoryTests.managed`): values the user never wrote, told apart from the user's own.
@Suite("The administrator's defaults and dconf databases, in the history")
struct AdministratorHistoryTests {
    @Test("a dconf database's new default and lock, and a plist default, are noted as who = managed with what they replace")
    func notedAsManaged() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        let service = try await ServiceFixture(arguments: files.arguments)
        let client = ServiceClient(connection: try service.connect())
        let (test, editor) = ("org.example.Test", "com.example.Editor")
        let watcher = try await ChangedCollector(connection: try service.connect(), domains: [test, editor])
        try await client.write(test, "text", .string("mine"))

        try files.keyfile("site", "00-site", "[org/example/Test]\nint32=42\ntext='site'\n")
        try files.locks("site", "site", "/org/example/Test/text\n")
        try files.defaults(editor, ["FontSize": .integer(12)])
        let announced = await eventually {
            let changed = watcher.signals.reduce(into: [String: PropertyListValue]()) { all, signal in
                for (key, value) in signal.changed { all["\(signal.domain) \(key)"] = value }
            }
            return changed["\(test) int32"] == .integer(42) && changed["\(test) text"] == .string("site")
                && changed["\(editor) FontSize"] == .integer(12)
        }
        #expect(announced, "\(watcher.signals)")
        // The notes are committed after the signals: waited for, within the deadline.
        var notes: [HistoryEntry] = []
        let noted = await eventually {
            let entries =
                ((try? await client.perform(PreferencesCall.history(test))) ?? [])
                + ((try? await client.perform(PreferencesCall.history(editor))) ?? [])
            notes = entries.filter { $0.who == "managed" }
            return Set(notes.map(\.key)).isSuperset(of: ["int32", "text", "FontSize"])
        }
        #expect(noted, "\(notes)")
        let byKey = Dictionary(notes.map { ($0.key, $0) }) { first, _ in first }
        #expect(byKey["int32"]?.value == .integer(42) && byKey["int32"]?.previous == nil, "\(notes)")
        #expect(byKey["text"]?.value == .string("site") && byKey["text"]?.previous == .string("mine"), "\(notes)")
        #expect(byKey["FontSize"]?.value == .integer(12) && byKey["FontSize"]?.domain.rawValue == editor, "\(notes)")
    }
}
