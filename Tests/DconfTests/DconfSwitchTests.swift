import Dconf
import Foundation
import PrefsdTestSupport
import Testing

/// `prefs dconf-switch` and `prefs dconf-switch-back` on a session where Debian's
/// dconf-service runs: the user's service files (which the bus reads before the system's)
/// start prefsd in its place, and removing them hands dconf back.
@Suite("prefs dconf-switch and dconf-switch-back", .serialized)
struct DconfSwitchTests {
    @Test("switch: prefsd takes over from a running dconf-service, every value kept; back: dconf-service again, every value kept; both idempotent")
    func switchAndBack() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let bus = server.service.bus
        let session = try SwitchSession(server)
        defer { session.killServices() }
        func ownerCommandLine() -> String {
            guard let pid = bus.processID(owning: DconfBus.busName), let data = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")) else {
                return ""
            }
            return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
        }

        let keyfile = "[org/example/app]\nidle=uint32 600\npairs=[('a', 1)]\nsize=42\n\n[org/gnome/desktop/interface]\ncolor-scheme='prefer-dark'\n"
        #expect(try server.dconf(["load", "/"], input: keyfile).status == 0)
        #expect(ownerCommandLine().contains("dconf-service"), "\(ownerCommandLine())")

        let switched = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(switched.status == 0, "\(switched.stdout)\(switched.stderr)")
        #expect(switched.stdout.contains("stopped /usr/libexec/dconf-service"), "\(switched.stdout)")
        #expect(switched.stdout.contains("kept in"), "\(switched.stdout)")
        #expect(ownerCommandLine().contains("prefsd --dconf"), "\(ownerCommandLine())")
        let dumped = try server.dconf(["dump", "/"]).stdout
        #expect(dumped == keyfile, "\(dumped)")
        #expect(try server.dconf(["write", "/org/example/app/size", "43"]).status == 0)
        #expect(try session.prefs("read", "org.example.app", "size").stdout == "43\n")

        let again = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("already start prefsd --dconf") && !again.stdout.contains("stopped"), "\(again.stdout)")

        let back = try session.prefs("dconf-switch-back")
        #expect(back.status == 0, "\(back.stdout)\(back.stderr)")
        #expect(back.stdout.contains("holds every value"), "\(back.stdout)")
        #expect(bus.processID(owning: DconfBus.busName) == nil)
        // The next dconf client starts dconf-service, on the file prefsd left.
        let expected = keyfile.replacingOccurrences(of: "size=42", with: "size=43")
        #expect(try server.dconf(["dump", "/"]).stdout == expected)
        #expect(try server.dconf(["reset", "/org/example/app/idle"]).status == 0)
        #expect(ownerCommandLine().contains("dconf-service"), "\(ownerCommandLine())")

        let backAgain = try session.prefs("dconf-switch-back")
        #expect(backAgain.status == 0 && backAgain.stdout.contains("no service file"), "\(backAgain.stdout)\(backAgain.stderr)")
        #expect(ownerCommandLine().contains("dconf-service"))

        // Switching once more takes in what changed under dconf-service, the reset included.
        let third = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(third.status == 0, "\(third.stdout)\(third.stderr)")
        #expect(try server.dconf(["read", "/org/example/app/idle"]).stdout == "")
        #expect(try session.prefs("read", "org.example.app", "idle").status != 0)
        #expect(try server.dconf(["dump", "/"]).stdout == expected.replacingOccurrences(of: "idle=uint32 600\n", with: ""))
    }

    @Test(
        "switch to a prefsd that cannot take the database in: the command fails at once with prefsd's reason and undoes the switch: dconf-service, every value kept"
    )
    func switchRefused() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let bus = server.service.bus
        let session = try SwitchSession(server)
        defer { session.killServices() }
        let keyfile = "[org/example/app]\nsize=42\n"
        #expect(try server.dconf(["load", "/"], input: keyfile).status == 0)
        // prefsd takes a database in only once a copy of it is kept aside: in a directory
        // nothing can be added to (immutable, as a user or a backup tool can leave it), it
        // cannot keep one.
        let directory = server.databaseFile.deletingLastPathComponent().path
        let locked = try runCommand("chattr", ["+i", directory])
        try #require(locked.status == 0, "chattr +i (run as root): \(locked.stderr)")
        defer { _ = try? runCommand("chattr", ["-i", directory]) }

        let switched = try session.prefs("dconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(switched.status != 0, "\(switched.stdout)")
        #expect(switched.stderr.contains("prefsd started but does not serve dconf"), "\(switched.stderr)")
        #expect(switched.stderr.contains("could not be kept aside before taking it in"), "\(switched.stderr)")

        // Undone at once: that prefsd stopped too, and the next dconf client starts dconf-service.
        #expect(switched.stderr.contains("the switch was undone: dconf-service serves dconf again"), "\(switched.stderr)")
        #expect(switched.stdout.contains("(it owned io.github.prefsd.Preferences1)"), "\(switched.stdout)")
        #expect(bus.processID(owning: "io.github.prefsd.Preferences1") == nil)
        #expect(try server.dconf(["dump", "/"]).stdout == keyfile)
        let back = try session.prefs("dconf-switch-back")
        #expect(back.status == 0 && back.stdout.contains("no service file"), "\(back.stdout)\(back.stderr)")
    }

    @Test("switch to a prefsd that does not start: the command fails with the bus's reason and undoes the switch: dconf-service again")
    func switchToNothing() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let session = try SwitchSession(server)
        defer { session.killServices() }
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)

        let switched = try session.prefs("dconf-switch", "--prefsd", "/bin/false")
        #expect(switched.status != 0, "\(switched.stdout)")
        #expect(switched.stderr.contains("could not start ca.desrt.dconf"), "\(switched.stderr)")
        #expect(switched.stderr.contains("exited with status 1"), "the bus's own answer, not a time-out: \(switched.stderr)")

        #expect(try session.prefs("dconf-switch-back").status == 0)
        #expect(try server.read("/org/example/app/size") == "42")
    }
}
