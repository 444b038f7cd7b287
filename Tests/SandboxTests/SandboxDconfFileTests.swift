import Foundation
import PrefsdTestSupport
import Testing

/// What a Flatpak application given dconf's usual access (its name and read access to
/// `~/.config/dconf`) reads in dconf's file: every mapped domain, as under dconf-service,
/// but what prefsd keeps from sandboxes.
@Suite("dconf's file and sandboxed applications", .serialized)
struct SandboxDconfFileTests {
    @Test(
        "dconf's file leaves out a sandboxed app's own domain and suites (also what the host wrote there, and after a restart), the reserved domains and xfconf's; a sandboxed reader gets every other mapped domain"
    )
    func fileLeavesOutWhatSandboxesAreKeptFrom() async throws {
        let fixture = try await SandboxDconfTests.servingDconf()
        let profile = fixture.bus.directory.appendingPathComponent("dconf-profile")
        try "user-db:user\n".write(to: profile, atomically: true, encoding: .utf8)
        let config = fixture.bus.directory.appendingPathComponent("config")
        func host(_ arguments: String...) throws {
            let result = try fixture.run(ServiceFixture.prefsBinary.path, arguments)
            #expect(result.status == 0, "prefs \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        try host("write", "org.gnome.desktop", "interface/cursor-size", "-int", "24")
        try host("write", "org.example.App", "shared", "-string", "host-wrote-it")
        try host("write", "io.github.prefsd", "setting", "-string", "prefsd-own")
        try host("write", "org.freedesktop.appearance", "color-scheme", "-int", "1")
        try host("write", "NSGlobalDomain", "Greeting", "-string", "global-value")
        try host("write", "xfconf.xfce4-panel", "position", "-string", "xfconf-value")

        // Another application, given dconf's name, reads dconf's file as dconf's clients do.
        var reader = try FlatpakSandbox(fixture: fixture, applicationID: "org.example.Reader")
        reader.talkNames = ["ca.desrt.dconf"]
        func dump() throws -> String {
            let command = [
                "/usr/bin/env", "XDG_CONFIG_HOME=\(config.path)", "XDG_RUNTIME_DIR=/tmp", "DCONF_PROFILE=\(profile.path)", "dconf", "dump", "/",
            ]
            let result = try runCommand("bwrap", try reader.commandLine(command))
            #expect(result.status == 0, "dconf dump in the sandbox: \(result.stderr)")
            return result.stdout
        }
        /// Waits until dconf's file holds the host's change of `value` made last.
        func sentinel(_ value: Int) async throws {
            try host("write", "org.gnome.desktop", "interface/sentinel", "-int", "\(value)")
            let deadline = ContinuousClock.now + .seconds(15)
            while try !dump().contains("sentinel=int64 \(value)"), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(50))
            }
        }
        try await sentinel(1)
        let before = try dump()
        #expect(before.contains("cursor-size=int64 24"), "\(before)")
        // Before the application has called prefsd, prefsd does not know the domain is one.
        #expect(before.contains("host-wrote-it"), "\(before)")
        for hidden in ["prefsd-own", "color-scheme", "global-value", "xfconf-value"] {
            #expect(!before.contains(hidden), "dconf's file shows \(hidden): \(before)")
        }

        // The application's first call: its own values, through prefsd's door.
        let app = try FlatpakSandbox(fixture: fixture, applicationID: "org.example.App")
        for (domain, key, value) in [("org.example.App", "secret", "s3cret"), ("org.example.App.Suite", "token", "t0ken")] {
            let written = try app.prefs("write", domain, key, "-string", value)
            #expect(written.status == 0, "the app's own write: \(written.stderr)")
        }
        try await sentinel(2)
        let after = try dump()
        #expect(after.contains("cursor-size=int64 24"), "\(after)")
        for hidden in ["s3cret", "t0ken", "host-wrote-it"] {
            #expect(!after.contains(hidden), "dconf's file shows the sandboxed app's \(hidden): \(after)")
        }

        // The list of applications outlives a restart.
        let list = fixture.storeDirectory.appendingPathComponent("sandboxed-applications")
        #expect(try String(contentsOf: list, encoding: .utf8).contains("org.example.App\n"))
        #expect(fixture.stopService() == 0)
        try await fixture.startService(arguments: ["--dconf"])
        try await sentinel(3)
        let restarted = try dump()
        for hidden in ["s3cret", "t0ken", "host-wrote-it"] {
            #expect(!restarted.contains(hidden), "after a restart dconf's file shows the sandboxed app's \(hidden): \(restarted)")
        }
        #expect(try fixture.prefs("read", "org.example.App", "secret").stdout == "s3cret\n", "the host reads the app's domain")
    }
}
