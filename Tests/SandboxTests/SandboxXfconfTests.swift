import Foundation
import PrefsdTestSupport
import Testing

/// A Flatpak application given xfconf's bus name (`--talk-name=org.xfce.Xfconf`), as today's
/// Xfce Flatpaks are, reaching prefsd serving xfconf: no channel is its own, so every call
/// is refused with xfconfd's `PermissionDenied`, and one it sends without waiting before it
/// leaves changes nothing.
@Suite("A sandboxed application through xfconf's protocol", .serialized)
struct SandboxXfconfTests {
    @Test("xfconf-query in a sandbox reads nothing and changes nothing; GDBus calls are refused with PermissionDenied naming the application")
    func refused() async throws {
        let fixture = try await Self.servingXfconf()
        let host = ["DBUS_SESSION_BUS_ADDRESS": fixture.bus.address]
        #expect(try runCommand("xfconf-query", ["-c", "xsettings", "-p", "/Net/ThemeName", "-n", "-t", "string", "-s", "Host"], environment: host).status == 0)
        var sandbox = try FlatpakSandbox(fixture: fixture, applicationID: "org.xfce.ristretto")
        sandbox.talkNames = ["org.xfce.Xfconf"]

        let read = try runCommand("bwrap", try sandbox.commandLine(["xfconf-query", "-c", "xsettings", "-p", "/Net/ThemeName"]))
        #expect(read.status != 0 && !read.stdout.contains("Host"), "\(read.stdout)\(read.stderr)")
        _ = try runCommand("bwrap", try sandbox.commandLine(["xfconf-query", "-c", "xsettings", "-p", "/Net/ThemeName", "-s", "Sandboxed"]))
        _ = try runCommand("bwrap", try sandbox.commandLine(["xfconf-query", "-c", "ristretto", "-p", "/own", "-n", "-t", "int", "-s", "1"]))
        let call = try runCommand(
            "bwrap",
            try sandbox.commandLine([
                "gdbus", "call", "--session", "--dest", "org.xfce.Xfconf", "--object-path", "/org/xfce/Xfconf", "--method",
                "org.xfce.Xfconf.SetProperty", "ristretto", "/own", "<1>",
            ]))
        #expect(call.status != 0)
        #expect(
            call.stderr.contains("org.xfce.Xfconf.Error.PermissionDenied") && call.stderr.contains("org.xfce.ristretto"), "\(call.stderr)")

        #expect(try runCommand("xfconf-query", ["-c", "xsettings", "-p", "/Net/ThemeName"], environment: host).stdout == "Host\n")
        #expect(try fixture.prefs("read", "xfconf.ristretto").status != 0, "the sandbox made a channel")
    }

    @Test("a sandboxed app that sends SetProperty and leaves at once changes nothing: a caller that left unidentified is refused on xfconf's connection")
    func fireAndForget() async throws {
        let fixture = try await Self.servingXfconf()
        var sandbox = try FlatpakSandbox(fixture: fixture, applicationID: "org.example.App")
        sandbox.talkNames = ["org.xfce.Xfconf"]
        // Each dbus-send leaves as soon as its call is written; the last call waits for its
        // answer, behind every one before it on the same route.
        let script = """
            i=0
            while [ $i -lt 20 ]; do
              dbus-send --session --type=method_call --dest=org.xfce.Xfconf /org/xfce/Xfconf org.xfce.Xfconf.SetProperty string:xsettings string:/Net/ThemeName variant:string:Stolen$i
              i=$((i+1))
            done
            dbus-send --session --print-reply --dest=org.xfce.Xfconf /org/xfce/Xfconf org.xfce.Xfconf.ListChannels
            exit 0
            """
        let result = try runCommand("bwrap", try sandbox.commandLine(["/bin/sh", "-c", script]), timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(result.stderr.contains("PermissionDenied"), "the sentinel call was answered: \(result.stdout)\(result.stderr)")
        let theme = try fixture.prefs("read", "xfconf.xsettings", "Net/ThemeName")
        #expect(!theme.stdout.contains("Stolen"), "a departed sandboxed sender changed xsettings: \(theme.stdout)")
    }

    /// A prefsd serving xfconf's name on its own bus.
    static func servingXfconf() async throws -> ServiceFixture {
        try await ServiceFixture.serving("org.xfce.Xfconf", arguments: ["--xfconf"])
    }
}
