import Foundation
import PrefsdTestSupport
import Testing

/// Debian's dconf-editor against prefsd as dconf-service, its window worked through AT-SPI as
/// a user would: what prefsd holds shows in the editor (and changes there while it is open),
/// and what is entered in the editor is stored by prefsd, as `prefs read` and `dconf read` see.
@Suite("dconf-editor against prefsd as dconf-service", .serialized)
struct DconfEditorTests {
    @Test("Values prefs wrote show in dconf-editor's folder and key page, and a change prefs makes while it is open appears")
    func prefsValuesShow() async throws {
        let server = try await DconfServer()
        for (key, flag, value) in [("on", "-bool", "yes"), ("size", "-int", "42")] {
            let written = try server.prefs("write", "org.example.app", key, flag, value)
            #expect(written.status == 0, "prefs write \(key): \(written.stderr)")
        }
        let session = try DconfEditorSession(server: server)

        // The folder's row of a key: its name and its value (dconf-editor's rows show the
        // value of a boolean; of an int64 only its type, "integer").
        try session.launch("/org/example/app/")
        let row = try session.drive(["wait-row", "on", "true"])
        #expect(row.succeeded, "dconf-editor's folder does not show on = true: \(row.output)\n\(session.log)")

        // The key's page: its value, then the change prefs makes (dconf's Notify reaches the editor).
        try session.launch("/org/example/app/size")
        let shown = try session.drive(["wait-row", "Current value", "42"])
        #expect(shown.succeeded, "dconf-editor's key page does not show size = 42: \(shown.output)\n\(session.log)")
        let changed = try server.prefs("write", "org.example.app", "size", "-int", "7")
        #expect(changed.status == 0, "prefs write: \(changed.stderr)")
        let updated = try session.drive(["wait-row", "Current value", "7"])
        #expect(updated.succeeded, "dconf-editor does not show the change to 7: \(updated.output)\n\(session.log)")
    }

    @Test("A number and a text entered in dconf-editor's key pages are stored by prefsd")
    func editorValuesStored() async throws {
        let server = try await DconfServer()
        // An int32 as dconf writes it, and a string prefs wrote.
        let size = try server.dconf(["write", "/org/example/app/size", "42"])
        #expect(size.status == 0, "dconf write: \(size.stderr)")
        let title = try server.prefs("write", "org.example.app", "title", "-string", "set by prefs")
        #expect(title.status == 0, "prefs write: \(title.stderr)")
        let session = try DconfEditorSession(server: server)

        // The number, in the key page's spin button.
        try session.launch("/org/example/app/size")
        let current = try session.drive(["wait-row", "Current value", "42"])
        #expect(current.succeeded, "the key page does not show 42: \(current.output)\n\(session.log)")
        let entered = try session.drive(["enter-beside", "Custom value", "8"])
        #expect(entered.succeeded, "\(entered.output)\n\(session.log)")
        let storedSize = try await session.waitFor("8") { try self.prefsRead(server, "size") }
        #expect(storedSize == "8", "prefs read org.example.app size: \(storedSize)")
        #expect(try server.read("/org/example/app/size") == "8", "dconf read keeps dconf's int32 type")
        let newCurrent = try session.drive(["wait-row", "Current value", "8"])
        #expect(newCurrent.succeeded, "the key page does not show 8: \(newCurrent.output)\n\(session.log)")

        // The text, in the key page's entry.
        try session.launch("/org/example/app/title")
        let currentTitle = try session.drive(["wait-row", "Current value", "'set by prefs'"])
        #expect(currentTitle.succeeded, "the key page does not show the title: \(currentTitle.output)\n\(session.log)")
        let typed = try session.drive(["enter-beside", "Custom value", "typed in dconf-editor"])
        #expect(typed.succeeded, "\(typed.output)\n\(session.log)")
        let storedTitle = try await session.waitFor("typed in dconf-editor") { try self.prefsRead(server, "title") }
        #expect(storedTitle == "typed in dconf-editor", "prefs read org.example.app title: \(storedTitle)")
        #expect(try server.read("/org/example/app/title") == "'typed in dconf-editor'")
    }

    /// `prefs read org.example.app KEY`, trimmed, or what went wrong.
    func prefsRead(_ server: DconfServer, _ key: String) throws -> String {
        let result = try server.prefs("read", "org.example.app", key)
        return result.status == 0 ? result.stdout.trimmingCharacters(in: .newlines) : "exit \(result.status): \(result.stderr)"
    }
}
