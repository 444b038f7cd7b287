import BusTestSupport
import DBus
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// A stand-in for prefsd on a private bus that owns prefsd's name, records the calls it
/// gets and answers none until told: what a client sends before any answer is visible.
public final class ScriptedPrefsd: Sendable {
    /// The stand-in's connection (it owns prefsd's name).
    public let connection: DBusConnection
    private let calls = Mutex<[DBusMessage]>([])

    /// Connects to `bus` and owns prefsd's name there.
    public init(bus: PrivateBus) async throws {
        connection = try DBusConnection.connect(address: bus.address)
        try connection.registerObject(path: PreferencesBus.objectPath) { [weak self] call in
            self?.calls.withLock { $0.append(call) }
        }
        guard try await connection.requestName(PreferencesBus.busName, flags: 4) == 1 else {
            throw BusTestSupportError.processFailed("the fake prefsd could not own \(PreferencesBus.busName)")
        }
    }

    /// The calls received so far, once there are at least `count` (within 10 s).
    public func waitForCalls(_ count: Int) async -> [DBusMessage] {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            let seen = calls.withLock { $0 }
            if seen.count >= count { return seen }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return calls.withLock { $0 }
    }

    /// Forgets the calls seen (answer them first).
    public func clear() { calls.withLock { $0 = [] } }

    /// Answers `call` with `body`.
    public func answer(_ call: DBusMessage, _ body: [DBusValue] = []) throws {
        try connection.send(call.makeReturn(body))
    }

    /// An `a{sv}` of property-list values, as prefsd answers `ReadDomain`.
    public static func dictionary(_ values: [String: PropertyListValue]) -> DBusValue {
        PropertyListValue.dictionary(values).dbusValue
    }
}
