import DBus
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

/// Something a test calls the service through: a bus connection (``ServiceClient``) or an
/// in-memory one. The typed calls use the proxy's requests (``PreferencesCall``) and fail
/// with the ``DBusError`` of the error answered, so a test sees the error name the service
/// gave; ``call(_:_:interface:)`` and ``refusal(_:_:)`` send arbitrary members and
/// arguments, for tests of what the service refuses.
public protocol PreferencesCaller {
    /// The reply to `message`.
    func send(_ message: DBusMessage) async throws(DBusError) -> DBusMessage
}

extension PreferencesCaller {
    /// Calls `method` with `body` and returns the reply's arguments.
    @discardableResult
    public func call(_ method: String, _ body: [DBusValue] = [], interface: String? = PreferencesBus.interface) async throws -> [DBusValue] {
        try await send(
            .methodCall(destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: interface, member: method, body: body)
        ).body
    }

    /// The error name a call is refused with, or `nil` when it succeeds.
    public func refusal(_ method: String, _ body: [DBusValue]) async -> String? {
        do {
            try await call(method, body)
            return nil
        } catch let error as DBusError where error.code == .remote {
            return error.name ?? ""
        } catch {
            return "unexpected: \(error)"
        }
    }

    /// Sends one of the proxy's requests and reads its reply.
    @discardableResult
    public func perform<Reply>(_ request: PreferencesRequest<Reply>) async throws -> Reply {
        try request.reply(try await send(request.message).body)
    }

    /// `Write` of a property-list value.
    public func write(_ domain: String, _ key: String, _ value: PropertyListValue) async throws {
        try await perform(PreferencesCall.write(domain, key, value))
    }

    /// `Write` of a D-Bus value as it is, to test what the service accepts on input.
    public func write(_ domain: String, _ key: String, raw value: DBusValue) async throws {
        try await call(PreferencesMethod.write.rawValue, [.string(domain), .string(key), .variant(value)])
    }

    /// `Read`'s answer as it travelled, to test the D-Bus types the service sends.
    public func read(_ domain: String, _ key: String) async throws -> DBusValue {
        guard case .variant(let value)? = try await send(PreferencesCall.read(domain, key).message).body.first else {
            throw FixtureError("Read did not answer a variant")
        }
        return value
    }

    /// `Read` as a property-list value.
    public func readValue(_ domain: String, _ key: String) async throws -> PropertyListValue {
        try await perform(PreferencesCall.read(domain, key))
    }

    /// `ReadDomain`.
    public func readDomain(_ domain: String) async throws -> [String: PropertyListValue] {
        try await perform(PreferencesCall.readDomain(domain))
    }

    /// `ReadVolatileDomain`.
    public func readVolatileDomain(_ domain: String) async throws -> [String: PropertyListValue] {
        try await perform(PreferencesCall.readVolatileDomain(domain))
    }

    /// `Domains`.
    public func domains() async throws -> [String] {
        try await perform(PreferencesCall.domains())
    }

    /// `VolatileDomains`.
    public func volatileDomains() async throws -> [String] {
        try await perform(PreferencesCall.volatileDomains())
    }

    /// `Domains` or `VolatileDomains`, named as tests written before ``domains()`` name them.
    public func strings(_ method: String) async throws -> [String] {
        switch method {
        case PreferencesMethod.domains.rawValue: try await domains()
        case PreferencesMethod.volatileDomains.rawValue: try await volatileDomains()
        default: throw FixtureError("strings(\(method)): only Domains and VolatileDomains answer a list of names")
        }
    }

    /// A dictionary of values as the methods take it, `a{sv}`.
    public static func values(_ values: [String: PropertyListValue]) -> DBusValue {
        PropertyListValue.dictionary(values).dbusValue
    }
}
