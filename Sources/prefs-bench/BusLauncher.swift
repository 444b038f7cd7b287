import Foundation

/// A private dbus-daemon on a unix socket in a temporary directory, with its own
/// configuration (the limits of Debian's session.conf) and an empty service directory.
final class BenchBus {
    let address: String
    let directory: URL
    private let child: Child

    init() throws {
        directory = try makeTemporaryDirectory("prefs-bench-bus")
        let services = directory.appendingPathComponent("services")
        try FileManager.default.createDirectory(at: services, withIntermediateDirectories: true)
        let config = directory.appendingPathComponent("bus.conf")
        try Self.configuration(socket: directory.appendingPathComponent("bus").path, services: services.path)
            .write(to: config, atomically: true, encoding: .utf8)
        guard let daemon = findExecutable("dbus-daemon") else { throw BenchError("dbus-daemon is not installed") }
        child = try Child(
            daemon, ["--config-file=\(config.path)", "--nofork", "--print-address=1"],
            log: directory.appendingPathComponent("dbus-daemon.log"))
        guard let line = child.readLine(timeout: 10), line.hasPrefix("unix:") else {
            child.stop(grace: 0)
            throw BenchError("dbus-daemon did not print its address")
        }
        address = line
    }

    /// Kills the daemon (SIGKILL: it may have inherited a blocked SIGTERM) and removes the directory.
    func stop() {
        child.stop(grace: 0)
        try? FileManager.default.removeItem(at: directory)
    }

    private static func configuration(socket: String, services: String) -> String {
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>session</type>
          <listen>unix:path=\(socket)</listen>
          <servicedir>\(services)</servicedir>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow send_destination="*" eavesdrop="true"/>
            <allow eavesdrop="true"/>
            <allow own="*"/>
          </policy>
          <limit name="max_incoming_bytes">1000000000</limit>
          <limit name="max_outgoing_bytes">1000000000</limit>
          <limit name="max_message_size">1000000000</limit>
          <limit name="service_start_timeout">120000</limit>
          <limit name="max_completed_connections">100000</limit>
          <limit name="max_connections_per_user">100000</limit>
          <limit name="max_match_rules_per_connection">50000</limit>
          <limit name="max_replies_per_connection">50000</limit>
        </busconfig>
        """
    }
}
