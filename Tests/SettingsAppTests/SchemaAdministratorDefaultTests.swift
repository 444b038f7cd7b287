import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// An administrator's default (an unlocked key of a dconf system database) on a schema
/// page, driven through AT-SPI under Xvfb: shown as the administrator's, not as the user's
/// own value; Reset is offered only for a value of the user's own, and brings the
/// administrator's default back (as `gsettings get` sees it too).
@Suite("Schema pages show an administrator's default as the administrator's", .serialized)
struct SchemaAdministratorDefaultTests {
    static let interface = "org.gnome.desktop.interface"

    @Test("a dconf keyfile default is shown as the administrator's; a user value set then reset brings it back")
    func administratorDefault() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        try files.keyfile("site", "00-site", "[org/gnome/desktop/interface]\ncursor-blink-time=1800\n")
        let fixture = try await ServiceFixture(arguments: files.arguments)
        let session = try SettingsWindowSession(fixture: fixture)
        let gsettings = try SchemaPageTests.GSettings(session: session)
        #expect(try gsettings.run("get", Self.interface, "cursor-blink-time") == "1800")
        #expect(try gsettings.run("writable", Self.interface, "cursor-blink-time") == "true")
        try session.launch("org.gnome.desktop")

        // The key list: the administrator's default, not a value of the user's.
        var step = try session.drive(["act", "push button", "Open \(Self.interface) at /org/gnome/desktop/interface/", "click"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")
        step = try session.drive(["wait-label-containing", "cursor-blink-time = 1800 (default set by your administrator)"])
        #expect(step.succeeded, "\(step.output)\n\(session.appLog)")

        // The key's page: the administrator's default, and no Reset (there is nothing of the user's to remove).
        step = try session.drive(["act", "push button", "Edit cursor-blink-time", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-label-containing", "default set by your administrator: 1800"])
        #expect(step.succeeded, "\(step.output)\n\((try? session.drive(["dump"]))?.output ?? "")")
        step = try session.drive(["wait-label-containing", "1800, set by your administrator (the schema's: 1200)"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "text", "cursor-blink-time", "--text", "1800"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "push button", "Reset to Default", "--sensitive", "no"])
        #expect(step.succeeded, "\(step.output)")

        // A value of the user's own: written, shown as theirs, and Reset is offered.
        step = try session.drive(["set-text", "text", "cursor-blink-time", "1500"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Apply cursor-blink-time", "click"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try await gsettings.waitForGet(Self.interface, "cursor-blink-time", "1500") == "1500")
        step = try session.drive(["wait", "push button", "Reset to Default", "--sensitive", "yes"])
        #expect(step.succeeded, "\(step.output)")

        // Reset: the administrator's default comes back, on the page and for GSettings.
        step = try session.drive(["act", "push button", "Reset to Default", "click"])
        #expect(step.succeeded, "\(step.output)")
        #expect(try await gsettings.waitForGet(Self.interface, "cursor-blink-time", "1800") == "1800")
        step = try session.drive(["wait-label-containing", "default set by your administrator: 1800"])
        #expect(step.succeeded, "\(step.output)\n\((try? session.drive(["dump"]))?.output ?? "")")
        step = try session.drive(["wait", "text", "cursor-blink-time", "--text", "1800"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait", "push button", "Reset to Default", "--sensitive", "no"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["act", "push button", "Back", "click"])
        #expect(step.succeeded, "\(step.output)")
        step = try session.drive(["wait-label-containing", "cursor-blink-time = 1800 (default set by your administrator)"])
        #expect(step.succeeded, "\(step.output)")
    }
}
