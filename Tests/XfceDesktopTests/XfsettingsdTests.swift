import Foundation
import PrefsdTestSupport
import Testing

/// Debian's xfsettingsd with prefsd in xfconfd's place: the theme in the `xsettings` channel
/// reaches the display's XSETTINGS, which every GTK program on the display follows, whether
/// set through Debian's `xfconf-query` or through `prefs write`.
@Suite("xfsettingsd against prefsd --xfconf", .serialized)
struct XfsettingsdTests {
    @Test("A theme name in the xsettings channel reaches the display's XSETTINGS, at start and when set through xfconf-query or prefs")
    func themeNameReachesDisplay() async throws {
        let desktop = try await XsettingsDisplay()

        // At start: a theme name already stored is what xfsettingsd publishes.
        let stored = try desktop.service.prefs("write", "xfconf.xsettings", "Net/ThemeName", "-string", "Adwaita")
        #expect(stored.status == 0, "prefs write: \(stored.stderr)")
        try await desktop.startSettingsDaemon()
        try await desktop.waitForSettings { $0["Net/ThemeName"] == "\"Adwaita\"" }

        // A change through xfconf-query: prefsd's PropertyChanged reaches xfsettingsd.
        let queried = try desktop.query(["-c", "xsettings", "-p", "/Net/ThemeName", "-s", "Greybird"])
        #expect(queried.status == 0, "xfconf-query -s: \(queried.stderr)")
        try await desktop.waitForSettings { $0["Net/ThemeName"] == "\"Greybird\"" }

        // A change through prefs, in the channel's domain.
        let written = try desktop.service.prefs("write", "xfconf.xsettings", "Net/ThemeName", "-string", "Greybird-dark")
        #expect(written.status == 0, "prefs write: \(written.stderr)")
        let settings = try await desktop.waitForSettings { $0["Net/ThemeName"] == "\"Greybird-dark\"" }

        // A property new to the channel, of another type, is published as well.
        let created = try desktop.query(["-c", "xsettings", "-p", "/Net/CursorBlinkTime", "-n", "-t", "int", "-s", "900"])
        #expect(created.status == 0, "xfconf-query -n: \(created.stderr)")
        try await desktop.waitForSettings { $0["Net/CursorBlinkTime"] == "900" }

        // It was prefsd that xfsettingsd read from: it still owns xfconf's name, and xfconf-query
        // reads the channel's value through it.
        #expect(desktop.service.bus.processID(owning: "org.xfce.Xfconf") == desktop.service.pid)
        let read = try desktop.query(["-c", "xsettings", "-p", "/Net/ThemeName"])
        #expect(read.stdout == "Greybird-dark\n", "xfconf-query reads \(read.stdout) \(read.stderr); XSETTINGS: \(settings)")
    }
}
