import Foundation
import PrefsdTestSupport
import Testing

/// A Flatpak application given dconf's bus name (`--talk-name=ca.desrt.dconf`) reaching
/// prefsd serving dconf: it may change the keys its own domains map to, and nothing else.
@Suite("A sandboxed application through dconf's protocol", .serialized)
struct SandboxDconfTests {
    @Test("dconf write from a sandbox: its own domain's keys change, another domain's are refused with AccessDenied and nothing changes; Blame is refused")
    func ownKeysOnly() async throws {
        let fixture = try await ServiceFixture(arguments: ["--dconf"])
        let deadline = ContinuousClock.now + .seconds(30)
        while fixture.bus.processID(owning: "ca.desrt.dconf") != fixture.pid, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        var sandbox = try FlatpakSandbox(fixture: fixture, applicationID: "org.example.App")
        sandbox.talkNames = ["ca.desrt.dconf"]
        func dconf(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
            try runCommand("bwrap", try sandbox.commandLine(["/usr/bin/dconf"] + arguments))
        }
        let own = try dconf("write", "/org/example/App/size", "42")
        #expect(own.status == 0, "\(own.stderr)")
        #expect(try fixture.prefs("read", "org.example.App", "size").stdout == "42\n")

        let other = try dconf("write", "/org/gnome/desktop/interface/color-scheme", "'prefer-dark'")
        #expect(other.status != 0)
        #expect(other.stderr.contains("AccessDenied") || other.stderr.contains("not its own"), "\(other.stderr)")
        #expect(try fixture.prefs("read", "org.gnome.desktop", "interface/color-scheme").status != 0)
        // A directory holding another domain's keys too: refused whole, its own keys kept.
        #expect(try fixture.prefs("write", "org.gnome.desktop", "interface/cursor-size", "-int", "24").status == 0)
        let reset = try dconf("reset", "-f", "/org/")
        #expect(reset.status != 0, "a sandbox reset keys of other domains: \(reset.stdout)")
        #expect(try fixture.prefs("read", "org.example.App", "size").stdout == "42\n")
        #expect(try fixture.prefs("read", "org.gnome.desktop", "interface/cursor-size").stdout == "24\n")
        // Blame tells every program's changes: not to a sandbox.
        let blame = try dconf("blame")
        #expect(blame.status != 0 && blame.stderr.contains("may not read Blame"), "\(blame.stdout)\(blame.stderr)")
    }
}
