import DBus
import PreferencesModel
import PrefsdTestSupport
import SettingsPortal
import Testing

/// prefsd's settings as a sandboxed application sees them, through Debian's
/// xdg-desktop-portal and `org.freedesktop.portal.Settings`.
@Suite("The Settings portal backend under xdg-desktop-portal")
struct PortalTests {
    private let appearance = "org.freedesktop.appearance"

    @Test("the appearance namespace: ReadAll and Read answer what prefs wrote, and a change arrives as SettingChanged")
    func appearanceNamespace() async throws {
        let fixture = try await PortalFixture { (service: ServiceFixture) async throws in
            try PortalFixture.prefs(service, "write", "org.freedesktop.appearance", "color-scheme", "-int", "1")
            try PortalFixture.prefs(service, "write", "org.freedesktop.appearance", "accent-color", "-array", "-float", "0.2", "-float", "0.4", "-float", "1")
            try PortalFixture.prefs(service, "write", "org.freedesktop.appearance", "contrast", "-string", "high")  // wrong type
        }
        let all = try await fixture.readAll([appearance])
        #expect(
            all == [
                appearance: [
                    "color-scheme": .uint32(1),
                    "accent-color": .structure([.double(0.2), .double(0.4), .double(1)]),
                ]
            ], "\(fixture.logs)")
        #expect(try await fixture.read(appearance, "color-scheme") == .uint32(1))

        try PortalFixture.prefs(fixture.service, "write", "org.freedesktop.appearance", "color-scheme", "-int", "2")
        let change = try await fixture.waitForChange { $0.key == "color-scheme" }
        #expect(change == SettingChange(namespace: appearance, key: "color-scheme", value: .uint32(2)))
        #expect(try await fixture.read(appearance, "color-scheme") == .uint32(2))

        // Removing the key falls back to "no preference".
        try PortalFixture.prefs(fixture.service, "delete", "org.freedesktop.appearance", "color-scheme")
        _ = try await fixture.waitForChange { $0.key == "color-scheme" && $0.value == .uint32(0) }
        #expect(fixture.changes.filter { $0.key == "color-scheme" }.map(\.value) == [.uint32(2), .uint32(0)])
    }

    @Test("exposed domains: none by default, then listed in io.github.prefsd.Portal, matched by ReadAll's globs, followed live")
    func exposedDomains() async throws {
        let fixture = try await PortalFixture { (service: ServiceFixture) async throws in
            try PortalFixture.prefs(service, "write", "org.example.Editor", "Theme", "dark")
            try PortalFixture.prefs(service, "write", "org.example.Viewer", "Zoom", "-int", "3")
            try PortalFixture.prefs(service, "write", "org.private.Diary", "Secret", "xyz")
            try PortalFixture.prefs(service, "write", "org.freedesktop.appearance", "color-scheme", "-int", "1")
        }
        #expect(try await fixture.readAll([""]).keys.sorted() == [appearance], "nothing but appearance is exposed by default")

        try PortalFixture.prefs(fixture.service, "write", "io.github.prefsd.Portal", "ExposedDomains", "-array", "org.example.Editor", "org.example.Viewer")
        let deadline = ContinuousClock.now + .seconds(30)
        var all: [String: [String: DBusValue]] = [:]
        while all.count < 3, ContinuousClock.now < deadline {
            all = try await fixture.readAll([])
            if all.count < 3 { try await Task.sleep(for: .milliseconds(20)) }
        }
        #expect(
            all == [
                appearance: ["color-scheme": .uint32(1)],
                "org.example.Editor": ["Theme": .string("dark")],
                "org.example.Viewer": ["Zoom": .int64(3)],
            ], "\(fixture.logs)")
        #expect(try await fixture.readAll(["org.example.*"]).keys.sorted() == ["org.example.Editor", "org.example.Viewer"])
        #expect(try await fixture.readAll(["org.example.Viewer", appearance]).keys.sorted() == ["org.example.Viewer", appearance])
        #expect(try await fixture.readAll(["org.private.*"]) == [:])
        #expect(try await fixture.readRefusal("org.private.Diary", "Secret") == PortalBus.notFoundError, "an unexposed key reads as not found")

        try PortalFixture.prefs(fixture.service, "write", "org.example.Editor", "Theme", "light")
        _ = try await fixture.waitForChange { $0.namespace == "org.example.Editor" && $0.value == .string("light") }
        // Exposing the domain announced its keys; the write announced the new value.
        #expect(fixture.changes.filter { $0.namespace == "org.example.Editor" }.map(\.value) == [.string("dark"), .string("light")])
        #expect(!fixture.changes.contains { $0.namespace == "org.private.Diary" })
    }
}
