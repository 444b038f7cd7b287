import DBus
import PreferencesModel
import PreferencesProtocol

/// The calls `prefs` makes to prefsd, over a private connection to the session bus, with
/// every failure turned into a ``PrefsError`` that carries its exit status.
///
/// Calls let the bus start prefsd when it is not running (D-Bus activation).
public struct PreferencesBusClient: Sendable {
    /// The connection the calls go over.
    public let connection: DBusConnection

    /// A client over an open connection.
    public init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Connects to the session bus named by `DBUS_SESSION_BUS_ADDRESS`.
    /// - Throws: ``PrefsError/noBus(detail:)`` when there is none or it cannot be reached.
    public static func connectToSessionBus() throws(PrefsError) -> PreferencesBusClient {
        do {
            return PreferencesBusClient(connection: try DBusConnection.connectToSessionBus())
        } catch .noSessionBus {
            throw .noBus(detail: "no session bus: DBUS_SESSION_BUS_ADDRESS is not set; run prefs inside a desktop session, or under `dbus-run-session -- prefs …` with prefsd installed")
        } catch {
            throw .noBus(detail: "cannot reach the session bus: \(error.description)")
        }
    }

    /// Closes the connection.
    public func close() {
        connection.close()
    }

    // MARK: Methods

    /// `Read`: the value of `key` in `domain`.
    public func read(_ domain: String, _ key: String) async throws(PrefsError) -> PropertyListValue {
        let body = try await call(.read, [.string(domain), .string(key)], domain: domain, key: key)
        guard let first = body.first else { throw .unexpectedReply("Read answered no value") }
        return try value(first)
    }

    /// `Read`, with `nil` for a key (or domain) that does not exist.
    public func readIfPresent(_ domain: String, _ key: String) async throws(PrefsError) -> PropertyListValue? {
        do {
            return try await read(domain, key)
        } catch .keyNotFound, .domainNotFound {
            return nil
        }
    }

    /// `Write`: sets `key` in `domain` to `value`.
    public func write(_ domain: String, _ key: String, _ value: PropertyListValue) async throws(PrefsError) {
        _ = try await call(.write, [.string(domain), .string(key), value.dbusVariant], domain: domain, key: key)
    }

    /// `Remove`: removes `key` from `domain` (an absent key is no error).
    public func remove(_ domain: String, _ key: String) async throws(PrefsError) {
        _ = try await call(.remove, [.string(domain), .string(key)], domain: domain, key: key)
    }

    /// `Domains`: the persistent domains, sorted.
    public func domains() async throws(PrefsError) -> [String] {
        try strings(try await call(.domains, []))
    }

    /// `VolatileDomains`: the volatile domains, sorted.
    public func volatileDomains() async throws(PrefsError) -> [String] {
        try strings(try await call(.volatileDomains, []))
    }

    /// `ReadDomain` (or `ReadVolatileDomain` when `volatile`): every key of a domain.
    public func readDomain(_ domain: String, volatile: Bool = false) async throws(PrefsError) -> [String: PropertyListValue] {
        let body = try await call(volatile ? .readVolatileDomain : .readDomain, [.string(domain)], domain: domain)
        guard let first = body.first else { throw .unexpectedReply("ReadDomain answered nothing") }
        do {
            return try PropertyListValue.dictionary(dbus: first, maximumNesting: Int.max / 2)
        } catch {
            throw .unexpectedReply(error.description)
        }
    }

    /// `Apply`: sets `set` and removes `remove` in one atomic commit.
    public func apply(_ domain: String, set: [String: PropertyListValue], remove: [String]) async throws(PrefsError) {
        _ = try await call(
            .apply, [.string(domain), PropertyListValue.dictionary(set).dbusValue, .stringArray(remove)],
            domain: domain, key: set.keys.first ?? remove.first)
    }

    /// `ReplaceDomain`: the persistent domain holds exactly `values` afterwards.
    public func replaceDomain(_ domain: String, _ values: [String: PropertyListValue]) async throws(PrefsError) {
        _ = try await call(.replaceDomain, [.string(domain), PropertyListValue.dictionary(values).dbusValue], domain: domain)
    }

    /// `RemoveDomain`: removes a persistent domain.
    public func removeDomain(_ domain: String) async throws(PrefsError) {
        _ = try await call(.removeDomain, [.string(domain)], domain: domain)
    }

    /// `SetVolatileDomain`: creates a volatile domain holding `values`.
    public func setVolatileDomain(_ domain: String, _ values: [String: PropertyListValue]) async throws(PrefsError) {
        _ = try await call(.setVolatileDomain, [.string(domain), PropertyListValue.dictionary(values).dbusValue], domain: domain)
    }

    /// `RemoveVolatileDomain`: drops a volatile domain.
    public func removeVolatileDomain(_ domain: String) async throws(PrefsError) {
        _ = try await call(.removeVolatileDomain, [.string(domain)], domain: domain)
    }

    /// `IsForced`: whether an administrator forces `key` in `domain`.
    public func isForced(_ domain: String, _ key: String) async throws(PrefsError) -> Bool {
        let body = try await call(.isForced, [.string(domain), .string(key)], domain: domain, key: key)
        guard case .boolean(let forced)? = body.first else {
            throw .unexpectedReply("IsForced answered \(body.map(\.signature.rawValue).joined()) instead of a boolean")
        }
        return forced
    }

    // MARK: Plumbing

    /// Calls `method` and returns the reply's arguments, mapping every failure.
    private func call(
        _ method: PreferencesMethod, _ body: [DBusValue], domain: String? = nil, key: String? = nil
    ) async throws(PrefsError) -> [DBusValue] {
        do {
            return try await connection.call(.methodCall(
                destination: PreferencesBus.busName, path: PreferencesBus.objectPath,
                interface: PreferencesBus.interface, member: method.rawValue, body: body
            )).body
        } catch {
            throw Self.map(error, domain: domain, key: key)
        }
    }

    /// The ``PrefsError`` for a failed call about `domain` (and `key`).
    static func map(_ error: DBusError, domain: String?, key: String?) -> PrefsError {
        switch error {
        case .remote(let name, let message):
            let detail = message.isEmpty ? name : message
            if let serviceError = PreferencesErrorName(busName: name) {
                switch serviceError {
                case .notFound:
                    if let domain, let key { return .keyNotFound(domain: domain, key: key) }
                    if let domain { return .domainNotFound(domain) }
                    return .unexpectedReply(detail)
                case .invalidName, .invalidValue, .accessDenied: return .invalid(detail: detail)
                case .forced: return .forced(domain: domain ?? "the domain", detail: detail)
                case .exists: return .exists(domain: domain ?? "", detail: detail)
                case .quotaExceeded: return .quotaExceeded(detail: detail)
                case .storageFailed: return .storageFailed(detail: detail)
                }
            }
            if name == "org.freedesktop.DBus.Error.ServiceUnknown" || name.hasPrefix("org.freedesktop.DBus.Error.Spawn") {
                return .serviceUnavailable(detail: "prefsd is not running and the session bus cannot start it (\(detail)); install it with `make install PREFIX=~/.local` or start `prefsd` yourself")
            }
            if name == "org.freedesktop.DBus.Error.NoReply" || name == "org.freedesktop.DBus.Error.Timeout" {
                return .serviceUnavailable(detail: "prefsd did not answer in time (\(detail)); check that it is running (`journalctl --user -u prefsd`) and retry")
            }
            if name == "org.freedesktop.DBus.Error.NameHasNoOwner" || name == "org.freedesktop.DBus.Error.Disconnected" {
                return .serviceUnavailable(detail: "prefsd went away (\(detail)); retry, and check its log if it keeps happening")
            }
            return .unexpectedReply("\(name): \(detail)")
        case .disconnected, .connectionFailed, .noSessionBus:
            return .noBus(detail: "lost the session bus: \(error.description)")
        case .invalidMessage(let reason):
            return .invalid(detail: "the request cannot be sent: \(reason)")
        case .invalidArguments(let reason), .limitsExceeded(let reason):
            return .unexpectedReply(reason)
        case .outOfMemory:
            return .unexpectedReply(error.description)
        }
    }

    private func value(_ dbus: DBusValue) throws(PrefsError) -> PropertyListValue {
        do {
            return try PropertyListValue(dbus: dbus, maximumNesting: Int.max / 2)
        } catch {
            throw .unexpectedReply(error.description)
        }
    }

    private func strings(_ body: [DBusValue]) throws(PrefsError) -> [String] {
        guard case .array(_, let items)? = body.first else {
            throw .unexpectedReply("expected a list of domain names")
        }
        return items.compactMap(\.stringValue)
    }
}
