import Dconf
import Foundation
import PrefsdTestSupport

/// A desktop session on a ``DconfServer``'s bus: its own `XDG_DATA_HOME` (whose D-Bus
/// service files the bus reads before its own), and the session's environment also given to
/// the services the bus starts, as a desktop gives it.
struct SwitchSession {
    let server: DconfServer
    let environment: [String: String]
    /// prefsd's own bus name.
    static let prefsdName = "io.github.prefsd.Preferences1"

    init(_ server: DconfServer) throws {
        self.server = server
        let bus = server.service.bus
        var environment = server.environment
        environment["XDG_DATA_HOME"] = bus.directory.appendingPathComponent("data").path
        self.environment = environment
        let update = try runCommand(
            "dbus-send",
            [
                "--bus=\(bus.address)", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.UpdateActivationEnvironment",
            ]
                + ["dict:string:string:" + environment.filter { $0.key != "DBUS_SESSION_BUS_ADDRESS" }.map { "\($0.key),\($0.value)" }.joined(separator: ",")])
        guard update.status == 0 else { throw FixtureError("the bus took no activation environment: \(update.stderr)") }
    }

    /// The user's D-Bus service files (`$XDG_DATA_HOME/dbus-1/services`).
    var servicesDirectory: URL { server.service.bus.userServiceDirectory }
    /// The user's systemd units (`$XDG_CONFIG_HOME/systemd/user`).
    var unitDirectory: URL { server.configHome.appendingPathComponent("systemd/user") }
    /// prefsd's store when started without `--store` in this session (`$XDG_CONFIG_HOME/prefsd`).
    var storeDirectory: URL { server.configHome.appendingPathComponent("prefsd") }

    /// A `ca.desrt.dconf.service` of the user's own: Debian's dconf-service, started with
    /// `MY_OWN_DCONF=1` in its environment so that a test can tell it started.
    static let ownDconfService = "# my own dconf-service\n[D-BUS Service]\nName=ca.desrt.dconf\nExec=/usr/bin/env MY_OWN_DCONF=1 /usr/libexec/dconf-service\n"

    /// Whether the process owning dconf's name was started by ``ownDconfService``.
    var ownDconfServiceServes: Bool { ownerEnvironment().contains("MY_OWN_DCONF=1") }

    /// Runs the built `prefs` in the session.
    func prefs(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand(ServiceFixture.prefsBinary.path, arguments, environment: environment)
    }

    /// The command line of the process owning `name`, one argument each; empty when nothing
    /// owns it.
    func ownerArguments(_ name: String = DconfBus.busName) -> [String] { owner(name, "cmdline") }

    /// The environment of the process owning `name`, one `NAME=VALUE` each.
    func ownerEnvironment(_ name: String = DconfBus.busName) -> [String] { owner(name, "environ") }

    /// The strings of `/proc/PID/FILE` of the process owning `name`.
    private func owner(_ name: String, _ file: String) -> [String] {
        guard let pid = server.service.bus.processID(owning: name), let data = try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/\(file)")) else {
            return []
        }
        return data.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
    }

    /// The files in `directory` and below, by path relative to it, each with its bytes (a
    /// symbolic link as `-> TARGET`).
    func files(in directory: URL) -> [String: String] {
        var found: [String: String] = [:]
        guard let walker = FileManager.default.enumerator(atPath: directory.path) else { return found }
        while let relative = walker.nextObject() as? String {
            let path = directory.appendingPathComponent(relative).path
            if let target = try? FileManager.default.destinationOfSymbolicLink(atPath: path) {
                found[relative] = "-> " + target
            } else if let data = FileManager.default.contents(atPath: path) {
                found[relative] = String(decoding: data, as: UTF8.self)
            }
        }
        return found
    }

    /// Ends whatever owns dconf's name and prefsd's (the bus started them; the fixture did not).
    func killServices() {
        let bus = server.service.bus
        if let pid = bus.processID(owning: DconfBus.busName) { kill(pid, SIGKILL) }
        if let pid = bus.processID(owning: Self.prefsdName) { kill(pid, SIGKILL) }
    }
}
