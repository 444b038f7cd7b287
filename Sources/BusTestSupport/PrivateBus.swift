import Foundation
import Synchronization

/// A private `dbus-daemon` for one test: its own configuration, unix socket and (empty)
/// service directory inside a fresh temporary directory. It never touches the real session bus.
public final class PrivateBus: Sendable {
    /// The bus address, as printed by dbus-daemon (`unix:path=…,guid=…`).
    public let address: String
    /// The path of the bus's unix socket (the `path=` of ``address``).
    public var socketPath: String { directory.appendingPathComponent("bus").path }
    /// The temporary directory holding the socket, the configuration and `services/`.
    public let directory: URL
    /// The `<servicedir>` of the configuration: it exists and starts empty. Put `.service`
    /// files here for bus activation.
    public var serviceDirectory: URL { directory.appendingPathComponent("services") }
    /// The daemon's standard error (its warnings), inside ``directory``.
    public var logFile: URL { directory.appendingPathComponent("dbus-daemon.log") }

    private let process: Mutex<Process?>

    /// Starts `dbus-daemon --config-file=<own config> --nofork --print-address=1` and waits
    /// (at most 10 s) for it to print its address.
    public init() throws {
        var template = Array("/tmp/prefsd-bus-XXXXXX".utf8CString)
        guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
            throw BusTestSupportError.processFailed("mkdtemp failed: errno \(errno)")
        }
        let directory = URL(fileURLWithPath: String(cString: made), isDirectory: true)
        self.directory = directory
        let services = directory.appendingPathComponent("services")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        try FileManager.default.createDirectory(at: Self.userServiceDirectory(in: directory), withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        try Self.configuration(
            socket: directory.appendingPathComponent("bus").path, services: services.path,
            userServices: Self.userServiceDirectory(in: directory).path
        )
        .write(to: config, atomically: true, encoding: .utf8)

        let process = Process()
        process.executableURL = URL(fileURLWithPath: try findExecutable("dbus-daemon"))
        process.arguments = ["--config-file=\(config.path)", "--nofork", "--print-address=1"]
        let outPipe = Pipe()
        process.standardOutput = outPipe
        let log = directory.appendingPathComponent("dbus-daemon.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        let logHandle = try FileHandle(forWritingTo: log)
        // The child has its own copy once started: ours is closed, or every bus of a test
        // run would keep a descriptor open in the test process.
        defer { try? logHandle.close() }
        process.standardError = logHandle
        process.standardInput = FileHandle.nullDevice
        // What it activates inherits it.
        process.environment = helperEnvironment
        do {
            // The services it starts are its children: it must see them exit.
            try withProcessSignalsUnblocked { try process.run() }
        } catch {
            try? FileManager.default.removeItem(at: directory)
            throw error
        }
        self.process = Mutex(process)

        // Read the first line on another thread so a silent daemon cannot hang the test.
        let line = Mutex<String?>(nil)
        let done = DispatchSemaphore(value: 0)
        let handle = outPipe.fileHandleForReading
        DispatchQueue.global().async {
            var buffer = Data()
            while !buffer.contains(UInt8(ascii: "\n")) {
                let chunk = handle.availableData
                if chunk.isEmpty { break }
                buffer.append(chunk)
            }
            let text = String(decoding: buffer, as: UTF8.self)
            line.withLock { $0 = text.split(separator: "\n").first.map(String.init) }
            done.signal()
        }
        _ = done.wait(timeout: .now() + 10)
        guard let address = line.withLock({ $0 }), address.hasPrefix("unix:") else {
            address = ""
            stop()
            throw BusTestSupportError.processFailed("dbus-daemon did not print its address")
        }
        self.address = address
    }

    deinit {
        stop()
    }

    /// Kills the daemon with SIGKILL (SIGTERM may be blocked in the child), waits for it and
    /// removes the directory. Idempotent.
    public func stop() {
        let taken = process.withLock { process -> Process? in
            defer { process = nil }
            return process
        }
        guard let taken else { return }
        BusTestSupport.stop(taken, signal: SIGKILL)
        try? FileManager.default.removeItem(at: directory)
    }

    /// The process owning `name` on the bus at `address`, asked of the bus driver
    /// (`GetConnectionUnixProcessID` through `dbus-send`); nil when nothing owns it. A
    /// service the bus activated outlives its bus: a test ends it through this.
    public static func processID(owning name: String, onBusAt address: String) -> pid_t? {
        let reply = try? runCommand(
            "dbus-send",
            [
                "--bus=\(address)", "--print-reply=literal", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
                "org.freedesktop.DBus.GetConnectionUnixProcessID", "string:\(name)",
            ], timeout: .seconds(10))
        guard let reply, reply.status == 0,
            let number = reply.stdout.split(whereSeparator: \.isWhitespace).last.flatMap({ pid_t($0) }), number > 1
        else {
            return nil
        }
        return number
    }

    /// The process owning `name` on this bus; see ``processID(owning:onBusAt:)``.
    public func processID(owning name: String) -> pid_t? {
        Self.processID(owning: name, onBusAt: address)
    }

    /// The user's own service files (`$XDG_DATA_HOME/dbus-1/services` of a test whose data
    /// home is `data/` in the bus's directory), which come before ``serviceDirectory``'s,
    /// as a session bus reads the user's folder before the system's.
    public var userServiceDirectory: URL { Self.userServiceDirectory(in: directory) }

    private static func userServiceDirectory(in directory: URL) -> URL {
        directory.appendingPathComponent("data/dbus-1/services")
    }

    private static func configuration(socket: String, services: String, userServices: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socket)</listen>
          <servicedir>\(userServices)</servicedir>
          <servicedir>\(services)</servicedir>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <!-- Every limit of Debian's stock /usr/share/dbus-1/session.conf, so the private bus
               behaves like a session bus (a subscriber that stops reading fills the same
               allowances as it would there). -->
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_incoming_unix_fds">250000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_outgoing_unix_fds">250000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="service_start_timeout">120000</limit>
          <limit name="auth_timeout">240000</limit>
          <limit name="pending_fd_timeout">150000</limit>
          <limit name="max_completed_connections">100000</limit>
          <limit name="max_incomplete_connections">10000</limit>
          <limit name="max_connections_per_user">100000</limit>
          <limit name="max_pending_service_starts">10000</limit>
          <limit name="max_names_per_connection">50000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
          <limit name="max_replies_per_connection">50000</limit>
        </busconfig>
        """
    }
}
