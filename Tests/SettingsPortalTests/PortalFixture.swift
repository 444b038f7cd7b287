import BusTestSupport
import DBus
import Foundation
import PrefsdTestSupport
import SettingsPortal
import Synchronization

/// prefsd on a private bus, prefsd-portal activatable on it, and Debian's
/// xdg-desktop-portal serving `org.freedesktop.portal.Settings` from it, as a sandboxed
/// application would reach it.
final class PortalFixture: Sendable {
    static let portalBinary = "/usr/libexec/xdg-desktop-portal"
    static let desktop = "prefsd-test"

    let service: ServiceFixture
    private let frontend: Mutex<Process?>
    /// A client connection, with the `SettingChanged` signals it received.
    let client: DBusConnection
    private let received = Locked<[SettingChange]>([])

    /// Starts prefsd, then xdg-desktop-portal with a portal directory holding only
    /// prefsd's `.portal` file; `prepare` runs in between (to store settings first).
    init(prepare: (ServiceFixture) async throws -> Void = { _ in }) async throws {
        guard FileManager.default.isExecutableFile(atPath: Self.portalBinary) else {
            throw FixtureError("\(Self.portalBinary) is missing: install Debian's xdg-desktop-portal (scripts/install-dependencies does)")
        }
        service = try await ServiceFixture()
        try await prepare(service)
        let directory = service.bus.directory
        let portals = directory.appendingPathComponent("portals", isDirectory: true)
        try FileManager.default.createDirectory(at: portals, withIntermediateDirectories: true)
        let portalFile = try String(contentsOf: Self.repositoryFile("dbus/prefsd.portal"), encoding: .utf8)
        try portalFile.write(to: portals.appendingPathComponent("prefsd.portal"), atomically: true, encoding: .utf8)
        let backendLog = directory.appendingPathComponent("prefsd-portal.log")
        let activation = """
            [D-BUS Service]
            Name=\(PortalBus.busName)
            Exec=/bin/sh -c 'exec "$0" --log-level debug 2>>"$1"' \(ServiceFixture.executable("prefsd-portal").path) \(backendLog.path)

            """
        try activation.write(to: service.bus.serviceDirectory.appendingPathComponent("\(PortalBus.busName).service"), atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.portalBinary)
        var environment = helperEnvironment
        environment["DBUS_SESSION_BUS_ADDRESS"] = service.bus.address
        environment["XDG_DESKTOP_PORTAL_DIR"] = portals.path
        environment["XDG_CURRENT_DESKTOP"] = Self.desktop
        environment["XDG_RUNTIME_DIR"] = directory.path
        environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
        environment["XDG_DATA_HOME"] = directory.appendingPathComponent("data").path
        environment["XDG_DATA_DIRS"] = directory.appendingPathComponent("system-data").path
        environment["GIO_USE_VFS"] = "local"
        // With glib-networking installed, GIO's GNOME proxy resolver reads GSettings
        // schemas, and there are none under the empty XDG_DATA_DIRS: the portal aborts.
        environment["GIO_USE_PROXY_RESOLVER"] = "dummy"
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        let log = directory.appendingPathComponent("xdg-desktop-portal.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: log)
        process.standardInput = FileHandle.nullDevice
        process.arguments = ["--verbose"]
        try process.run()
        frontend = Mutex(process)

        client = try service.connect()
        client.setSignalHandler { [received] message in
            guard message.interface == "org.freedesktop.portal.Settings", message.member == "SettingChanged",
                message.body.count == 3, case .string(let namespace) = message.body[0],
                case .string(let key) = message.body[1], case .variant(let value) = message.body[2]
            else { return }
            received.withLock { $0.append(SettingChange(namespace: namespace, key: key, value: value)) }
        }
        try await waitForOwner("org.freedesktop.portal.Desktop")
        try await client.addMatch("type='signal',interface='org.freedesktop.portal.Settings',member='SettingChanged'")
    }

    deinit {
        if let process = frontend.withLock({ $0 }) { _ = stop(process, signal: SIGKILL) }
        client.close()
    }

    /// Runs `prefs` on the fixture's bus and fails unless it succeeds.
    static func prefs(_ service: ServiceFixture, _ arguments: String...) throws {
        let result = try service.run(ServiceFixture.prefsBinary.path, arguments)
        guard result.status == 0 else { throw FixtureError("prefs \(arguments.joined(separator: " ")) exited \(result.status): \(result.stderr)") }
    }

    /// What the portal and the backend logged, for failure messages.
    var logs: String {
        ["xdg-desktop-portal.log", "prefsd-portal.log"].map { name in
            "\(name): " + ((try? String(contentsOf: service.bus.directory.appendingPathComponent(name), encoding: .utf8)) ?? "").suffix(3000)
        }.joined(separator: "\n")
    }

    /// The `SettingChanged` signals the client saw, in order.
    var changes: [SettingChange] { received.withLock { $0 } }

    /// Waits until a signal matching `predicate` has arrived (at most 30 s: only a stalled
    /// machine takes that long).
    func waitForChange(_ predicate: (SettingChange) -> Bool) async throws -> SettingChange {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            if let found = changes.first(where: predicate) { return found }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw FixtureError("no matching SettingChanged; saw \(changes)\n\(logs)")
    }

    /// `org.freedesktop.portal.Settings.ReadAll`, as an application calls it.
    func readAll(_ namespaces: [String]) async throws -> [String: [String: DBusValue]] {
        let reply = try await portalCall("ReadAll", [.array(element: .string, namespaces.map(DBusValue.string))])
        guard case .array(_, let entries)? = reply.first else { throw FixtureError("ReadAll answered \(reply)") }
        var all: [String: [String: DBusValue]] = [:]
        for case .dictEntry(.string(let namespace), .array(_, let values)) in entries {
            var keys: [String: DBusValue] = [:]
            for case .dictEntry(.string(let key), .variant(let value)) in values { keys[key] = value }
            all[namespace] = keys
        }
        return all
    }

    /// `org.freedesktop.portal.Settings.Read`, unwrapped from its variant(s).
    func read(_ namespace: String, _ key: String) async throws -> DBusValue {
        var value = try await portalCall("Read", [.string(namespace), .string(key)]).first
        while case .variant(let inner)? = value { value = inner }
        guard let value else { throw FixtureError("Read answered nothing") }
        return value
    }

    /// The D-Bus error name `Settings.Read` of `namespace`/`key` is refused with; throws when
    /// the call succeeds or fails otherwise (a timeout, a portal that went away).
    func readRefusal(_ namespace: String, _ key: String) async throws -> String {
        do {
            let reply = try await client.call(
                .methodCall(
                    destination: "org.freedesktop.portal.Desktop", path: PortalBus.objectPath,
                    interface: "org.freedesktop.portal.Settings", member: "Read", body: [.string(namespace), .string(key)]
                ), timeout: .seconds(30)
            ).body
            throw FixtureError("Read \(namespace) \(key) answered \(reply)")
        } catch let error as DBusError where error.code == .remote {
            return error.name ?? ""
        } catch let error as DBusError {
            throw FixtureError("Read \(namespace) \(key) failed without an answer: \(error)\n\(logs)")
        }
    }

    private func portalCall(_ member: String, _ body: [DBusValue]) async throws -> [DBusValue] {
        do {
            return try await client.call(
                .methodCall(
                    destination: "org.freedesktop.portal.Desktop", path: PortalBus.objectPath,
                    interface: "org.freedesktop.portal.Settings", member: member, body: body
                ), timeout: .seconds(30)
            ).body
        } catch {
            throw FixtureError("\(member) failed: \(error)\n\(logs)")
        }
    }

    private func waitForOwner(_ name: String) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let reply = try await client.call(
                .methodCall(
                    destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus",
                    interface: "org.freedesktop.DBus", member: "NameHasOwner", body: [.string(name)]
                ))
            if reply.body.first == .boolean(true) { return }
            if let process = frontend.withLock({ $0 }), !process.isRunning {
                throw FixtureError("xdg-desktop-portal exited with status \(process.terminationStatus)\n\(logs)")
            }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw FixtureError("\(name) never appeared\n\(logs)")
    }

    /// A file of the repository, found from this source file's path.
    static func repositoryFile(_ path: String) -> URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent(path)
    }
}
