import BenchmarkKit
import DBus
import PreferencesProtocol

/// The method calls the benchmark makes, all through the project's own DBus module.
enum Calls {
    static let prefsdName = "io.github.prefsd.Preferences1"
    static let prefsdPath = "/io/github/prefsd/Preferences1"
    static let dconfName = "ca.desrt.dconf"
    static let dconfPath = "/ca/desrt/dconf/Writer/user"
    static let dconfInterface = "ca.desrt.dconf.Writer"

    static func ping(_ destination: String) -> DBusMessage {
        .methodCall(destination: destination, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
    }

    static func read(_ domain: String, _ key: String) -> DBusMessage {
        .methodCall(destination: prefsdName, path: prefsdPath, interface: prefsdName, member: "Read",
                    body: [.string(domain), .string(key)])
    }

    static func write(_ domain: String, _ key: String, _ value: Int64) -> DBusMessage {
        .methodCall(destination: prefsdName, path: prefsdPath, interface: prefsdName, member: "Write",
                    body: [.string(domain), .string(key), .variant(.int64(value))])
    }

    /// `Apply(domain, set, [])` of `keys` → their index as an int64.
    static func apply(_ domain: String, keys: Range<Int>, prefix: String = "k") -> DBusMessage {
        let entries = keys.map { (DBusValue.string("\(prefix)\($0)"), DBusValue.variant(.int64(Int64($0)))) }
        return .methodCall(
            destination: prefsdName, path: prefsdPath, interface: prefsdName, member: "Apply",
            body: [.string(domain), .dictionary(key: .string, value: .variant, entries), .array(element: .string, [])])
    }

    /// dconf's `Change(ay)` of a serialised changeset.
    static func dconfChange(_ changes: [(path: String, value: GVariantChangeset.Value?)]) -> DBusMessage {
        .methodCall(destination: dconfName, path: dconfPath, interface: dconfInterface, member: "Change",
                    body: [.bytes(GVariantChangeset.serialize(changes))])
    }
}

extension DBusConnection {
    /// A blocking call timed with the monotonic clock; throws the call's error.
    func timed(_ message: DBusMessage, timeout: Duration = .seconds(120)) throws -> Double {
        let start = now()
        _ = try callBlocking(message, timeout: timeout)
        return now() - start
    }
}
