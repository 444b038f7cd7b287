import CGLib
import DBus
import Dconf
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

/// The method calls the benchmark makes, all through the project's own DBus module; the
/// calls to prefsd are the proxy's requests (``PreferencesCall``), sent and timed here.
enum Calls {
    /// prefsd's bus name.
    static let prefsdName = PreferencesBus.busName
    static let dconfName = "ca.desrt.dconf"
    static let dconfPath = "/ca/desrt/dconf/Writer/user"
    static let dconfInterface = "ca.desrt.dconf.Writer"

    static func ping(_ destination: String) -> DBusMessage {
        .methodCall(destination: destination, path: "/", interface: "org.freedesktop.DBus.Peer", member: "Ping")
    }

    static func read(_ domain: String, _ key: String) -> DBusMessage {
        PreferencesCall.read(domain, key).message
    }

    static func write(_ domain: String, _ key: String, _ value: Int64) -> DBusMessage {
        PreferencesCall.write(domain, key, .integer(value)).message
    }

    /// `Apply(domain, set, [])` of `keys` → their index as an integer.
    static func apply(_ domain: String, keys: Range<Int>, prefix: String = "k") -> DBusMessage {
        let entries = Dictionary(uniqueKeysWithValues: keys.map { ("\(prefix)\($0)", PropertyListValue.integer(Int64($0))) })
        return PreferencesCall.apply(domain, set: entries, remove: []).message
    }

    /// `RemoveDomain(domain)`.
    static func removeDomain(_ domain: String) -> DBusMessage {
        PreferencesCall.removeDomain(domain).message
    }

    /// A value the benchmark writes to dconf.
    enum DconfValue {
        /// `i`
        case int32(Int32)
    }

    /// dconf's `Change(ay)` of a serialised changeset: each key set to its value, or reset.
    static func dconfChange(_ changes: [(path: String, value: DconfValue?)]) -> DBusMessage {
        let changeset = DconfChangeset.serialized(
            changes.map { change in
                switch change.value {
                case .int32(let number)?: (change.path, g_variant_new_int32(number))
                case nil: (change.path, nil)
                }
            })
        return .methodCall(destination: dconfName, path: dconfPath, interface: dconfInterface, member: "Change", body: [.bytes(changeset)])
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
