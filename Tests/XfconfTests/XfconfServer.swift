import Foundation
import PrefsdTestSupport

/// A private bus with an xfconf daemon on it: prefsd serving xfconf's name
/// (`prefsd --xfconf`), or Debian's xfconfd, started by the bus on the first call to
/// `org.xfce.Xfconf` with the test's own `XDG_CONFIG_HOME`. Debian's `xfconf-query`,
/// libxfconf (through PyGObject) and a small GDBus client run against either, so a test can
/// run the same commands against both and compare what they print.
final class XfconfServer: Sendable {
    /// Which program serves `org.xfce.Xfconf`.
    enum Daemon: String, Sendable {
        case prefsd, xfconfd
    }

    let service: ServiceFixture
    let daemon: Daemon

    /// Starts prefsd with `--xfconf` (and `arguments`) and waits until it owns xfconf's name,
    /// or makes xfconfd the bus's service for that name.
    init(_ daemon: Daemon, arguments: [String] = []) async throws {
        self.daemon = daemon
        switch daemon {
        case .prefsd:
            service = try await ServiceFixture(arguments: ["--xfconf"] + arguments)
            try await waitForXfconfName()
        case .xfconfd:
            let xfconfd = try RealXfconfd.executable()
            service = try ServiceFixture(activatable: ())
            let file = """
                [D-BUS Service]
                Name=org.xfce.Xfconf
                Exec=/usr/bin/env XDG_CONFIG_HOME=\(configHome.path) \(xfconfd)

                """
            try file.write(to: service.bus.serviceDirectory.appendingPathComponent("org.xfce.Xfconf.service"), atomically: true, encoding: .utf8)
        }
        try FileManager.default.createDirectory(at: configHome, withIntermediateDirectories: true)
    }

    /// The daemons' and the tools' `XDG_CONFIG_HOME` (the fixture's).
    var configHome: URL { service.bus.directory.appendingPathComponent("config") }

    /// What the tools run with: the test's bus as the session bus, no display.
    var environment: [String: String] {
        ["DBUS_SESSION_BUS_ADDRESS": service.bus.address, "XDG_CONFIG_HOME": configHome.path, "DISPLAY": ""]
    }

    /// Waits until prefsd owns `org.xfce.Xfconf`.
    func waitForXfconfName() async throws {
        let owned = try await eventually(timeout: .seconds(30)) {
            service.bus.processID(owning: "org.xfce.Xfconf") != nil
        }
        if !owned { throw FixtureError("prefsd did not own org.xfce.Xfconf; its log ends: \(service.log.suffix(2000))") }
    }

    /// Runs Debian's `xfconf-query` with `arguments`.
    func query(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand("xfconf-query", arguments, environment: environment)
    }

    /// Runs a Python program (the system's, with PyGObject) on the test's bus.
    func python(_ script: String, arguments: [String] = []) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand("/usr/bin/python3", ["-c", script] + arguments, environment: environment)
    }

    /// Calls xfconf's methods through GDBus, one line of `calls` each (`Method (args as
    /// GVariant text)`, or `Method` alone), and answers one line per call: the call, then
    /// `ok` and the reply as GVariant text (a dictionary's entries sorted), or `error` and the
    /// error name (with the message when `messages`).
    func call(_ calls: [String], messages: Bool = false) throws -> [String] {
        // In a file: one argument of a command line holds at most 128 KiB.
        let file = service.bus.directory.appendingPathComponent("calls-\(UUID().uuidString)")
        try calls.joined(separator: "\n").write(to: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(at: file) }
        let result = try python(Self.caller, arguments: [messages ? "messages" : "names", file.path])
        guard result.status == 0 else { throw FixtureError("the GDBus caller failed: \(result.stderr)") }
        return result.stdout.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    /// The GDBus client of ``call(_:messages:)``.
    static let caller = """
        import sys
        from gi.repository import Gio, GLib
        bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
        def shown(reply):
            if reply.get_type_string() != '(a{sv})':
                return reply.print_(True)
            entries = reply.get_child_value(0)
            children = sorted((entries.get_child_value(i) for i in range(entries.n_children())),
                              key=lambda entry: entry.get_child_value(0).get_string())
            return GLib.Variant.new_tuple(GLib.Variant.new_array(GLib.VariantType('{sv}'), children)).print_(True)
        for line in open(sys.argv[2]).read().split('\\n'):
            method, _, text = line.partition(' ')
            args = GLib.Variant.parse(None, text, None, None) if text else None
            try:
                reply = bus.call_sync('org.xfce.Xfconf', '/org/xfce/Xfconf', 'org.xfce.Xfconf', method, args, None,
                                      Gio.DBusCallFlags.NONE, 20000, None)
                print(line, '=> ok', shown(reply))
            except GLib.Error as error:
                name = Gio.DBusError.get_remote_error(error)
                Gio.DBusError.strip_remote_error(error)
                print(line, '=> error', name + (': ' + error.message if sys.argv[1] == 'messages' else ''))
        """
}
