import DBus
import PreferencesModel
import PreferencesProtocol

/// Calls the service's methods from a test, the way any client on the bus would.
public struct PreferencesClient {
    public let connection: DBusConnection

    /// A client calling over `connection`.
    public init(connection: DBusConnection) {
        self.connection = connection
    }

    /// Calls `method` with `body` and returns the reply's arguments.
    @discardableResult
    public func call(_ method: String, _ body: [DBusValue] = [], interface: String? = PreferencesBus.interface) async throws -> [DBusValue] {
        try await connection.call(.methodCall(
            destination: PreferencesBus.busName, path: PreferencesBus.objectPath,
            interface: interface, member: method, body: body
        )).body
    }

    /// The error name a call is refused with, or `nil` when it succeeds.
    public func refusal(_ method: String, _ body: [DBusValue]) async -> String? {
        do {
            try await call(method, body)
            return nil
        } catch let DBusError.remote(name, _) {
            return name
        } catch {
            return "unexpected: \(error)"
        }
    }

    public func write(_ domain: String, _ key: String, _ value: PropertyListValue) async throws {
        try await call("Write", [.string(domain), .string(key), value.dbusVariant])
    }

    public func write(_ domain: String, _ key: String, raw value: DBusValue) async throws {
        try await call("Write", [.string(domain), .string(key), .variant(value)])
    }

    public func read(_ domain: String, _ key: String) async throws -> DBusValue {
        guard case .variant(let value)? = try await call("Read", [.string(domain), .string(key)]).first else {
            throw FixtureError("Read did not answer a variant")
        }
        return value
    }

    public func readValue(_ domain: String, _ key: String) async throws -> PropertyListValue {
        try PropertyListValue(dbus: try await read(domain, key))
    }

    public func readDomain(_ domain: String) async throws -> [String: PropertyListValue] {
        try await dictionary("ReadDomain", domain)
    }

    public func readVolatileDomain(_ domain: String) async throws -> [String: PropertyListValue] {
        try await dictionary("ReadVolatileDomain", domain)
    }

    private func dictionary(_ method: String, _ domain: String) async throws -> [String: PropertyListValue] {
        guard let answer = try await call(method, [.string(domain)]).first else {
            throw FixtureError("\(method) answered nothing")
        }
        return try PropertyListValue.dictionary(dbus: answer)
    }

    public func strings(_ method: String) async throws -> [String] {
        guard case .array(_, let items)? = try await call(method).first else { throw FixtureError("\(method) did not answer an array") }
        return items.compactMap { if case .string(let text) = $0 { text } else { nil } }
    }

    public static func values(_ values: [String: PropertyListValue]) -> DBusValue {
        PropertyListValue.dictionary(values).dbusValue
    }
}
