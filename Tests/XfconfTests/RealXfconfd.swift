import BusTestSupport
import CGLib
import Foundation

@testable import Xfconf

/// Debian's xfconfd on a private bus, with its own configuration folders: the user's in
/// ``userChannels``, the administrator's (`XDG_CONFIG_DIRS`) in ``systemChannels``.
final class RealXfconfd {
    let bus: PrivateBus
    let directory: URL
    private var process: Process?

    /// Where Debian installs xfconfd (the multiarch folder of the machine, or libexec).
    static func executable() throws -> String {
        let candidates =
            ["x86_64-linux-gnu", "aarch64-linux-gnu", "i386-linux-gnu", "arm-linux-gnueabihf"].map {
                "/usr/lib/\($0)/xfce4/xfconf/xfconfd"
            } + ["/usr/libexec/xfce4/xfconf/xfconfd", "/usr/lib/xfce4/xfconf/xfconfd"]
        guard let found = candidates.first(where: { FileManager.default.isExecutableFile(atPath: $0) }) else {
            throw BusTestSupportError.executableNotFound("xfconfd (Debian's xfconf package: apt-get install xfconf)")
        }
        return found
    }

    /// An xfconfd on a bus of its own, its folders in `directory` (a new one in the bus's
    /// folder by default: `config/` and `system/`).
    init(directory: URL? = nil) throws {
        bus = try PrivateBus()
        self.directory = directory ?? bus.directory.appendingPathComponent("xfconf", isDirectory: true)
        for folder in [userChannels, systemChannels] {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        }
    }

    deinit { _ = stop() }

    /// The user's channel folder, `$XDG_CONFIG_HOME/xfce4/xfconf/xfce-perchannel-xml`.
    var userChannels: URL { directory.appendingPathComponent("config/xfce4/xfconf/xfce-perchannel-xml", isDirectory: true) }
    /// The administrator's channel folder, in the one folder of `$XDG_CONFIG_DIRS`.
    var systemChannels: URL { directory.appendingPathComponent("system/xfce4/xfconf/xfce-perchannel-xml", isDirectory: true) }

    var environment: [String: String] {
        [
            "DBUS_SESSION_BUS_ADDRESS": bus.address, "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_CONFIG_DIRS": directory.appendingPathComponent("system").path,
        ]
    }

    /// Starts xfconfd and waits until it owns `org.xfce.Xfconf`.
    func start() async throws {
        // With the test process's signals unblocked, so that SIGTERM ends it.
        let (started, _) = try withProcessSignalsUnblocked {
            try startCommand(try Self.executable(), [], environment: environment, outputIn: directory)
        }
        process = started
        guard await eventually(timeout: .seconds(20), { bus.processID(owning: "org.xfce.Xfconf") != nil }) else {
            throw BusTestSupportError.processFailed("xfconfd did not take org.xfce.Xfconf on the test's bus")
        }
    }

    /// Stops xfconfd with SIGTERM, on which it writes every changed channel; its exit status.
    @discardableResult
    func stop() -> Int32? {
        guard let running = process else { return nil }
        process = nil
        return BusTestSupport.stop(running)
    }

    /// Runs `xfconf-query` with `arguments` against this xfconfd.
    func query(_ arguments: [String]) throws -> String {
        let result = try runCommand("xfconf-query", arguments, environment: environment)
        guard result.status == 0 else {
            throw BusTestSupportError.processFailed("xfconf-query \(arguments.joined(separator: " ")) failed: \(result.stderr)")
        }
        return result.stdout
    }

    /// Every property of `channel` as xfconfd answers `GetAllProperties`, read through
    /// gdbus's GVariant text, each value with its type.
    func allProperties(_ channel: String) throws -> [String: XfconfValue] {
        try Self.allProperties(channel, busAddress: bus.address)
    }

    /// Every property of `channel` as the xfconf daemon on the bus at `busAddress` answers
    /// `GetAllProperties`, each value with its type.
    static func allProperties(_ channel: String, busAddress: String) throws -> [String: XfconfValue] {
        let result = try runCommand(
            "gdbus",
            [
                "call", "--address", busAddress, "--dest", "org.xfce.Xfconf", "--object-path", "/org/xfce/Xfconf", "--method",
                "org.xfce.Xfconf.GetAllProperties", channel, "/",
            ])
        guard result.status == 0 else { throw BusTestSupportError.processFailed("GetAllProperties failed: \(result.stderr)") }
        var error: UnsafeMutablePointer<GError>?
        let type = g_variant_type_new("(a{sv})")
        defer { g_variant_type_free(type) }
        guard let reply = g_variant_parse(type, result.stdout, nil, nil, &error) else {
            defer { g_clear_error(&error) }
            throw BusTestSupportError.processFailed("gdbus printed what is no (a{sv}): \(result.stdout)")
        }
        g_variant_ref_sink(reply)
        defer { g_variant_unref(reply) }
        let dictionary = g_variant_get_child_value(reply, 0)!
        defer { g_variant_unref(dictionary) }
        var properties: [String: XfconfValue] = [:]
        for index in 0..<Int(g_variant_n_children(dictionary)) {
            let entry = g_variant_get_child_value(dictionary, gsize(index))!
            defer { g_variant_unref(entry) }
            let key = g_variant_get_child_value(entry, 0)!
            defer { g_variant_unref(key) }
            let boxed = g_variant_get_child_value(entry, 1)!
            defer { g_variant_unref(boxed) }
            let value = g_variant_get_variant(boxed)!
            defer { g_variant_unref(value) }
            let name = String(cString: g_variant_get_string(key, nil))
            guard let parsed = XfconfValue(variant: value) else {
                throw BusTestSupportError.processFailed("xfconfd answered \(name) with a value of no xfconf type")
            }
            properties[name] = parsed
        }
        return properties
    }
}
