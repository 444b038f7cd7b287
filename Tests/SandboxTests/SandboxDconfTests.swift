import Foundation
import PrefsdTestSupport
import Testing

/// A Flatpak application given dconf's bus name (`--talk-name=ca.desrt.dconf`) reaching
/// prefsd serving dconf: it may change the keys its own domains map to, and nothing else.
@Suite("A sandboxed application through dconf's protocol", .serialized)
struct SandboxDconfTests {
    @Test("dconf write from a sandbox: its own domain's keys change, another domain's are refused with AccessDenied and nothing changes; Blame is refused")
    func ownKeysOnly() async throws {
        let fixture = try await Self.servingDconf()
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

    @Test(
        "a sandboxed app that sends Change, or Write to dconf's owner, and leaves at once changes nothing: a caller that left unidentified is refused on dconf's connection"
    )
    func fireAndForgetThroughDconf() async throws {
        let fixture = try await Self.servingDconf()
        var sandbox = try FlatpakSandbox(fixture: fixture, applicationID: "org.example.App")
        sandbox.talkNames = ["ca.desrt.dconf"]
        let blob = try Self.serialisedChange("/org/gnome/desktop/interface/color-scheme", "prefer-dark")
        let rounds = 20
        // Each dbus-send leaves as soon as its call is written; xdg-dbus-proxy then closes its
        // connection to the bus, often before prefsd has asked which process it was. The
        // script ends with a dconf write of the app's own key, which waits for its answer: a
        // call behind every one before it on the same route.
        let script = """
            owner=$(dbus-send --session --print-reply=literal --dest=org.freedesktop.DBus / org.freedesktop.DBus.GetNameOwner string:ca.desrt.dconf | tr -d ' ')
            [ -n "$owner" ] || { echo "no owner of ca.desrt.dconf" >&2; exit 3; }
            i=0
            while [ $i -lt \(rounds) ]; do
              dbus-send --session --type=method_call --dest=ca.desrt.dconf /ca/desrt/dconf/Writer/user ca.desrt.dconf.Writer.Change array:byte:\(blob)
              dbus-send --session --type=method_call --dest="$owner" /io/github/prefsd/Preferences1 io.github.prefsd.Preferences1.Write string:NSGlobalDomain string:Stolen$i variant:int32:$i
              i=$((i+1))
            done
            dconf write /org/example/App/sentinel 1
            """
        let result = try runCommand("bwrap", try sandbox.commandLine(["/bin/sh", "-c", script]), timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        #expect(try fixture.prefs("read", "org.example.App", "sentinel").stdout == "1\n")
        let gnome = try fixture.prefs("read", "org.gnome.desktop", "interface/color-scheme")
        #expect(gnome.status != 0, "a departed sandboxed sender changed a GNOME key: \(gnome.stdout)")
        let global = try fixture.prefs("read", "NSGlobalDomain")
        #expect(!global.stdout.contains("Stolen"), "a departed sandboxed sender wrote NSGlobalDomain: \(global.stdout)")
    }

    @Test("a sandbox given dconf's name hears Notify, as from dconf-service, and nothing of prefsd's own interface")
    func hearsNotifyOnly() async throws {
        let fixture = try await Self.servingDconf()
        var sandbox = try FlatpakSandbox(fixture: fixture, applicationID: "org.example.App")
        sandbox.talkNames = ["ca.desrt.dconf"]
        // Every signal of ca.desrt.dconf's owner: a match rule on its sender, as an app may add.
        // Its output goes to a file (gdbus flushes each line), read as it grows.
        let (monitor, output) = try startCommand(
            "bwrap", try sandbox.commandLine(["gdbus", "monitor", "--session", "--dest", "ca.desrt.dconf"]), outputIn: fixture.bus.directory)
        defer {
            if monitor.isRunning { kill(monitor.processIdentifier, SIGKILL) }
            _ = waitForExit(of: monitor)
        }
        func heard() -> String { (try? String(contentsOf: output, encoding: .utf8)) ?? "" }
        func waitFor(_ text: String) async throws {
            let deadline = ContinuousClock.now + .seconds(30)
            while !heard().contains(text) {
                guard ContinuousClock.now < deadline, monitor.isRunning else {
                    throw FixtureError("the sandbox's gdbus monitor did not print \"\(text)\"; it printed: \(heard())")
                }
                try await Task.sleep(for: .milliseconds(10))
            }
        }
        try await waitFor("is owned by")
        #expect(try fixture.prefs("write", "org.example.Other", "secret", "-string", "s3cret-value").status == 0)
        #expect(try fixture.prefs("write", "org.example.Third", "token", "-string", "t0ken-value").status == 0)
        // The sentinel: the last change's Notify.
        #expect(try fixture.prefs("write", "org.example.App", "sentinel", "-int", "1").status == 0)
        try await waitFor("/org/example/App/")
        let heard = heard()
        #expect(heard.contains("ca.desrt.dconf.Writer.Notify"), "\(heard)")
        #expect(heard.contains("/org/example/Other/"), "the other domain's Notify (as dconf-service sends it) did not come: \(heard)")
        #expect(!heard.contains("io.github.prefsd"), "the sandbox heard prefsd's own interface: \(heard)")
        #expect(!heard.contains("s3cret-value") && !heard.contains("t0ken-value"), "the sandbox heard another domain's values: \(heard)")
    }

    /// A prefsd serving dconf, once it owns dconf's name.
    static func servingDconf() async throws -> ServiceFixture {
        try await ServiceFixture.serving("ca.desrt.dconf", arguments: ["--dconf"])
    }

    /// The bytes of a serialised dconf changeset setting `key` to the string `value`, as
    /// dbus-send's `array:byte:` list, made by GLib (PyGObject).
    static func serialisedChange(_ key: String, _ value: String) throws -> String {
        let program = """
            import sys
            from gi.repository import GLib
            changeset = GLib.Variant('a{smv}', {sys.argv[1]: GLib.Variant('s', sys.argv[2])})
            print(','.join(str(b) for b in changeset.get_data_as_bytes().get_data()))
            """
        let result = try runCommand("/usr/bin/python3", ["-c", program, key, value])
        guard result.status == 0, !result.stdout.isEmpty else { throw FixtureError("PyGObject did not serialise the changeset: \(result.stderr)") }
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }
}
