import BenchmarkKit
import BusTestSupport
import DBus
import Foundation
import Synchronization

/// dconf-service on the private bus, started directly (not bus-activated) with its own
/// XDG_CONFIG_HOME and XDG_RUNTIME_DIR in a temporary directory, so its database is
/// `<dir>/config/dconf/user`. It exits when idle for a while; ``ensureRunning(probe:)``
/// starts it again on the same database.
final class DconfInstance {
    static let executable = "/usr/libexec/dconf-service"
    let directory: URL
    let bus: String
    private var child: Child?
    private var starts = 0

    init(bus: String) throws {
        self.bus = bus
        directory = try makeTemporaryDirectory("prefs-bench-dconf")
        try Self.makeHome(directory)
    }

    /// Makes the `config`, `runtime` and `cache` directories (mode 0700) of a dconf user in
    /// `directory`, as dconf-service and its clients find them through ``xdgEnvironment(_:)``.
    static func makeHome(_ directory: URL) throws {
        for sub in ["config", "runtime", "cache"] {
            try FileManager.default.createDirectory(
                at: directory.appendingPathComponent(sub), withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
        }
    }

    /// `XDG_CONFIG_HOME`, `XDG_RUNTIME_DIR` and `XDG_CACHE_HOME` naming the directories of
    /// ``makeHome(_:)`` in `directory`.
    static func xdgEnvironment(_ directory: URL) -> [String: String] {
        [
            "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": directory.appendingPathComponent("runtime").path,
            "XDG_CACHE_HOME": directory.appendingPathComponent("cache").path,
        ]
    }

    var database: URL { directory.appendingPathComponent("config/dconf/user") }

    /// dconf-service's process ID while it runs.
    var pid: Int32? { child.flatMap { $0.process.isRunning ? $0.pid : nil } }

    /// Starts dconf-service unless it runs, and waits (at most 20 s) for it to answer a Ping.
    func ensureRunning(probe: DBusConnection) throws {
        if let child, child.process.isRunning { return }
        var environment = ProcessInfo.processInfo.environment.merging(Self.xdgEnvironment(directory)) { $1 }
        environment["DBUS_SESSION_BUS_ADDRESS"] = bus
        environment["HOME"] = directory.path
        starts += 1
        let started = try Child(
            Self.executable, [], environment: environment,
            log: directory.appendingPathComponent("dconf-service-\(starts).log"))
        child = started
        let deadline = now() + 20
        while true {
            if (try? probe.callBlocking(Calls.ping(Calls.dconfName), timeout: .seconds(2))) != nil { return }
            if !started.process.isRunning || now() > deadline {
                started.stop(grace: 1)
                throw BenchError("dconf-service did not come up on the private bus")
            }
            usleep(2000)
        }
    }

    func stop() {
        child?.stop(grace: 5)
        try? FileManager.default.removeItem(at: directory)
    }

    /// Checks the changeset encoder once against dconf itself: a `Change` must be answered
    /// with a tag, and the `Notify` signal dconf emits must name the key written (dconf
    /// parsed our bytes back). With `dconf` (dconf-cli) installed, also reads the value back.
    /// Returns a sentence saying what was verified.
    func verifyEncoder(connection: DBusConnection) throws -> String {
        let seen = Mutex<[DBusMessage]>([])
        connection.setSignalHandler { message in
            if message.member == "Notify" { seen.withLock { $0.append(message) } }
        }
        _ = try connection.callBlocking(BusDriver.addMatch("type='signal',interface='ca.desrt.dconf.Writer',member='Notify'"))
        let reply = try connection.callBlocking(Calls.dconfChange([("/bench/verify/answer", .int32(42))]))
        guard case .string(let tag)? = reply.body.first, !tag.isEmpty else {
            throw BenchError("dconf's Change answered \(reply.signature), not a tag")
        }
        let deadline = now() + 5
        var notify: DBusMessage?
        while notify == nil && now() < deadline {
            notify = seen.withLock { $0.first }
            if notify == nil { usleep(1000) }
        }
        guard let notify, case .string(let prefix)? = notify.body.first,
            case .array(_, let changes)? = notify.body.dropFirst().first
        else { throw BenchError("dconf emitted no Notify for the verification change") }
        let paths = changes.compactMap(\.stringValue).map { prefix + $0 }
        guard paths == ["/bench/verify/answer"] else {
            throw BenchError("dconf's Notify names \(paths), not /bench/verify/answer: the encoder is wrong")
        }
        var verified = "dconf answered Change with tag \(tag) and its Notify named /bench/verify/answer"
        if let dconf = try? findExecutable("dconf") {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: dconf)
            process.arguments = ["read", "/bench/verify/answer"]
            var environment = ProcessInfo.processInfo.environment
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus
            environment["XDG_CONFIG_HOME"] = directory.appendingPathComponent("config").path
            environment["XDG_RUNTIME_DIR"] = directory.appendingPathComponent("runtime").path
            process.environment = environment
            let pipe = Pipe()
            process.standardOutput = pipe
            try process.run()
            process.waitUntilExit()
            let text = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
                .trimmingCharacters(in: .whitespacesAndNewlines)
            guard text == "42" else { throw BenchError("`dconf read /bench/verify/answer` gave \"\(text)\", not 42") }
            verified += "; `dconf read` gives 42"
        }
        // Reset the key again (a Nothing value), so it does not count among the keys.
        _ = try connection.callBlocking(Calls.dconfChange([("/bench/verify/answer", nil)]))
        return verified
    }
}
