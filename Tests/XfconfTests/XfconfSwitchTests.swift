import Foundation
import PrefsdTestSupport
import Testing
import Xfconf

/// `prefs xfconf-switch` and `prefs xfconf-switch-back` on a session whose bus starts
/// Debian's xfconfd for `org.xfce.Xfconf`: the user's service files (which the bus reads
/// before the system's) start prefsd in its place, and removing them hands xfconf back.
@Suite("prefs xfconf-switch and xfconf-switch-back", .serialized)
struct XfconfSwitchTests {
    /// A session: its bus starts xfconfd for xfconf's name (Debian's own service file's
    /// command), every program of it sees the test's folders.
    private struct Session {
        let service: ServiceFixture
        let environment: [String: String]

        init() throws {
            service = try ServiceFixture(activatable: ())
            let bus = service.bus
            let xfconfd = try RealXfconfd.executable()
            try "[D-BUS Service]\nName=org.xfce.Xfconf\nExec=\(xfconfd)\n".write(
                to: bus.serviceDirectory.appendingPathComponent("org.xfce.Xfconf.service"), atomically: true, encoding: .utf8)
            environment = [
                "DBUS_SESSION_BUS_ADDRESS": bus.address, "XDG_CONFIG_HOME": bus.directory.appendingPathComponent("config").path,
                "XDG_CONFIG_DIRS": bus.directory.appendingPathComponent("system-config").path,
                "XDG_DATA_HOME": bus.directory.appendingPathComponent("data").path,
                // Where the switch finds the command that starts xfconfd without it: Debian's file.
                "XDG_DATA_DIRS": "/usr/share", "HOME": bus.directory.path,
            ]
            let update = try runCommand(
                "dbus-send",
                [
                    "--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                    "org.freedesktop.DBus.UpdateActivationEnvironment",
                    "dict:string:string:" + environment.filter { $0.key != "DBUS_SESSION_BUS_ADDRESS" }.map { "\($0.key),\($0.value)" }.joined(separator: ","),
                ])
            guard update.status == 0 else { throw FixtureError("the bus took no activation environment: \(update.stderr)") }
        }

        func run(_ tool: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try runCommand(tool, arguments, environment: environment)
        }

        func prefs(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
            try run(ServiceFixture.prefsBinary.path, arguments)
        }

        /// The command line of the process owning xfconf's name; empty when none does.
        var xfconfOwner: String {
            guard let pid = service.bus.processID(owning: "org.xfce.Xfconf"),
                let data = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline"))
            else { return "" }
            return String(decoding: data.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self)
        }

        /// Ends what the bus started (it outlives the bus).
        func killServices() {
            for name in ["org.xfce.Xfconf", "io.github.prefsd.Preferences1"] {
                if let pid = service.bus.processID(owning: name) { kill(pid, SIGKILL) }
            }
        }
    }

    @Test("switch: prefsd takes over from a running xfconfd, every value kept; back: xfconfd again, every value kept; both idempotent")
    func switchAndBack() async throws {
        let session = try Session()
        defer { session.killServices() }
        for arguments in [
            ["-c", "xfwm4", "-p", "/general/theme", "-n", "-t", "string", "-s", "Default"],
            ["-c", "xfwm4", "-p", "/general/workspace_count", "-n", "-t", "int", "-s", "4"],
            ["-c", "xsettings", "-p", "/Net/ThemeName", "-n", "-t", "string", "-s", "Adwaita"],
        ] {
            let set = try session.run("xfconf-query", arguments)
            #expect(set.status == 0, "\(set.stderr)")
        }
        #expect(session.xfconfOwner.contains("xfconfd"), "\(session.xfconfOwner)")

        let switched = try session.prefs("xfconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(switched.status == 0, "\(switched.stdout)\(switched.stderr)")
        #expect(switched.stdout.contains("stopped") && switched.stdout.contains("xfconfd"), "\(switched.stdout)")
        #expect(switched.stdout.contains("kept in"), "\(switched.stdout)")
        #expect(session.xfconfOwner.contains("prefsd --xfconf"), "\(session.xfconfOwner)")
        let address = session.service.bus.address
        #expect(
            try RealXfconfd.allProperties("xfwm4", busAddress: address) == [
                "/general/theme": .scalar(.string("Default")), "/general/workspace_count": .scalar(.int32(4)),
            ])
        #expect(try session.run("xfconf-query", ["-c", "xfwm4", "-p", "/general/workspace_count", "-s", "6"]).status == 0)
        #expect(try session.prefs("read", "xfconf.xfwm4", "general/workspace_count").stdout == "6\n")

        let again = try session.prefs("xfconf-switch", "--prefsd", ServiceFixture.binary.path)
        #expect(again.status == 0, "\(again.stderr)")
        #expect(again.stdout.contains("already start prefsd --xfconf") && !again.stdout.contains("stopped"), "\(again.stdout)")

        let back = try session.prefs("xfconf-switch-back")
        #expect(back.status == 0, "\(back.stdout)\(back.stderr)")
        #expect(back.stdout.contains("hold every value"), "\(back.stdout)")
        #expect(session.service.bus.processID(owning: "org.xfce.Xfconf") == nil)
        // The next xfconf client starts xfconfd, on the files prefsd left.
        #expect(
            try RealXfconfd.allProperties("xfwm4", busAddress: address) == [
                "/general/theme": .scalar(.string("Default")), "/general/workspace_count": .scalar(.int32(6)),
            ])
        // (xfconfd also reads the machine's /etc/xdg, whatever $XDG_CONFIG_DIRS says: its defaults.)
        #expect(try RealXfconfd.allProperties("xsettings", busAddress: address)["/Net/ThemeName"] == .scalar(.string("Adwaita")))
        #expect(session.xfconfOwner.contains("xfconfd"), "\(session.xfconfOwner)")

        let backAgain = try session.prefs("xfconf-switch-back")
        #expect(backAgain.status == 0 && backAgain.stdout.contains("no service file"), "\(backAgain.stdout)\(backAgain.stderr)")
        #expect(session.xfconfOwner.contains("xfconfd"))
    }

    @Test("switch to a prefsd that does not start: the command fails with the bus's reason and undoes the switch: xfconfd again, every value kept")
    func switchToNothing() async throws {
        let session = try Session()
        defer { session.killServices() }
        #expect(try session.run("xfconf-query", ["-c", "c", "-p", "/a", "-n", "-t", "int", "-s", "42"]).status == 0)

        let switched = try session.prefs("xfconf-switch", "--prefsd", "/bin/false")
        #expect(switched.status != 0, "\(switched.stdout)")
        #expect(switched.stderr.contains("could not start org.xfce.Xfconf"), "\(switched.stderr)")
        #expect(switched.stderr.contains("the switch was undone"), "\(switched.stderr)")
        #expect(try RealXfconfd.allProperties("c", busAddress: session.service.bus.address) == ["/a": .scalar(.int32(42))])
        #expect(session.xfconfOwner.contains("xfconfd"), "\(session.xfconfOwner)")
        let back = try session.prefs("xfconf-switch-back")
        #expect(back.status == 0 && back.stdout.contains("no service file"), "\(back.stdout)\(back.stderr)")
    }
}
