import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// The real Settings window under Xvfb, driven through AT-SPI as a screen reader sees it,
/// against a real prefsd on a private bus.
@Suite("The Settings window, driven through AT-SPI", .serialized)
struct SettingsWindowTests {
    @Test("a bundle's pane: a switch writes, prefs write moves the widgets, a forced key is locked, a refused write is shown")
    func bundlePane() async throws {
        let managed = try ServiceFixture.managedDirectory(["com.example.Editor": ["Theme": .string("dark")]])
        defer { try? FileManager.default.removeItem(at: managed) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", managed.path, "--allow-unowned-managed-dir", "--max-value-size", "64"])
        let session = try SettingsWindowSession(fixture: fixture)
        try session.launch("com.example.Editor")

        // The rows are there with the bundle's titles as their accessible names, and the defaults.
        var step = try session.drive(["wait", "check box", "Dark style", "--checked", "no", "--sensitive", "yes"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        step = try session.drive(["wait", "text", "Next item name", "--text", "Coffee Cup"])
        #expect(step.succeeded, "\(step.output)")

        // Toggling the switch writes the key at once.
        step = try session.drive(["act", "check box", "Dark style", "toggle"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try await session.waitForStored("com.example.Editor", "DarkStyle", "1") == "1")

        // A change made elsewhere shows in the window.
        #expect(try session.prefs(["write", "com.example.Editor", "NextItemName", "-string", "Tea Pot"]).status == 0)
        step = try session.drive(["wait", "text", "Next item name", "--text", "Tea Pot"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try session.prefs(["write", "com.example.Editor", "DarkStyle", "-bool", "false"]).status == 0)
        step = try session.drive(["wait", "check box", "Dark style", "--checked", "no"])
        #expect(step.succeeded, "\(step.output)")

        // Typing into the text field writes it.
        step = try session.drive(["set-text", "text", "Next item name", "Kettle"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try await session.waitForStored("com.example.Editor", "NextItemName", "Kettle") == "Kettle")

        // The forced key is locked (not sensitive), with the administrator's value.
        step = try session.drive(["wait", "combo box", "Theme", "--sensitive", "no"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-label-containing", "Locked by your administrator"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try session.prefs(["is-forced", "com.example.Editor", "Theme"]).stdout == "true\n")

        // A write prefsd refuses (a value over --max-value-size) is shown, and the field
        // goes back to what is stored. (Replacing the text is a deletion, written at once,
        // and then the insertion, which is refused.)
        let long = String(repeating: "x", count: 200)
        step = try session.drive(["set-text", "text", "Next item name", long])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-label-containing", "“Next item name” was not saved"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        #expect(step.output.contains("--max-value-size"), "the message says which limit: \(step.output)")
        let stored = try session.prefs(["read", "com.example.Editor", "NextItemName"]).stdout
        #expect(stored == "\n" || stored == "Kettle\n", "the long value is not stored: \(stored)")
        step = try session.drive(["wait", "text", "Next item name", "--text", String(stored.dropLast())])
        #expect(step.succeeded, "\(step.output)")
    }

    @Test("a domain without a bundle: the raw editor shows each key and follows prefs write; search; delete")
    func rawEditor() async throws {
        let fixture = try await ServiceFixture()
        let session = try SettingsWindowSession(fixture: fixture)
        #expect(try session.prefs(["write", "com.example.Other", "Greeting", "-string", "hello"]).status == 0)
        #expect(try session.prefs(["write", "com.example.Other", "Count", "-int", "3"]).status == 0)
        try session.launch("com.example.Other")

        var step = try session.drive(["wait", "text", "Greeting", "--text", "hello"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        step = try session.drive(["wait", "text", "Count", "--text", "3"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-label-containing", "integer"])
        #expect(step.succeeded, "\(step.output)")

        #expect(try session.prefs(["write", "com.example.Other", "Greeting", "-string", "world"]).status == 0)
        step = try session.drive(["wait", "text", "Greeting", "--text", "world"])
        #expect(step.succeeded, "\(step.output)")

        // The sidebar lists the bundle's application first, then the other domains; search
        // finds a domain by a value (the new one, "world") and hides the rest.
        step = try session.drive(["wait", "list item", "Editor", "--visible", "yes"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["set-text", "entry", "Search settings", "WORLD"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-gone", "list item", "Editor"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "list item", "com.example.Other", "--visible", "yes"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["set-text", "entry", "Search settings", "next item"])  // a title in the bundle
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "list item", "Editor", "--visible", "yes"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-gone", "list item", "com.example.Other"])
        #expect(step.succeeded, "\(step.output)")

        // Deleting a key in the window removes it from prefsd.
        step = try session.drive(["act", "push button", "Delete Count", "click"])
        #expect(step.succeeded, "\(step.output)")
        let deadline = ContinuousClock.now + .seconds(20)
        var status: Int32 = 0
        while ContinuousClock.now < deadline {
            status = try session.prefs(["read", "com.example.Other", "Count"]).status
            if status == 1 { break }
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(status == 1)
    }

    @Test("a domain's History page: who changed which key, newest first; Undo undoes the last change and the page shows the restore")
    func historyPage() async throws {
        let fixture = try await ServiceFixture()
        let session = try SettingsWindowSession(fixture: fixture)
        #expect(try session.prefs(["write", "com.example.Other", "Greeting", "-string", "hello"]).status == 0)
        #expect(try session.prefs(["write", "com.example.Other", "Count", "-int", "3"]).status == 0)
        #expect(try session.prefs(["write", "com.example.Other", "Count", "-int", "4"]).status == 0)
        try session.launch("com.example.Other")

        // The History button of the domain's page opens its History: every change, newest
        // first, each with its key, old → new, and who made it (prefs).
        var step = try session.drive(["wait", "text", "Count", "--text", "4"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        step = try session.drive(["act", "push button", "History", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive([
            "wait-labels-in-order", "Changes", "Count: 3 → 4", "by prefs", "Count: (none) → 3", "by prefs",
            "Greeting: (none) → \"hello\"", "by prefs",
        ])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")

        // Undo puts back the value from before the last change only.
        step = try session.drive(["act", "push button", "Undo", "click"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try await session.waitForStored("com.example.Other", "Count", "3") == "3")
        #expect(try session.prefs(["read", "com.example.Other", "Greeting"]).stdout == "hello\n")

        // The page follows: the undo is the newest entry, made by restore.
        step = try session.drive(["wait-labels-in-order", "Changes", "Count: 4 → 3", "by restore", "Count: 3 → 4", "by prefs"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        let history = try session.prefs(["history", "com.example.Other", "--json"])
        #expect(history.stdout.contains("\"who\":\"restore\""), "\(history.stdout)")
        #expect(!session.appLog.contains("not undone"), "\(session.appLog)")
    }
}
