import BusTestSupport
import Foundation
import Synchronization
import Testing

@testable import DBus

/// A private bus with a server connection exporting `/echo` and a client connection.
///
/// `/echo` answers `Echo` with the body it received, `Fail` with the error
/// `com.example.Error.Failed` "it failed", ignores `Ignore`, and answers anything else with
/// `org.freedesktop.DBus.Error.UnknownMethod`.
final class EchoFixture: Sendable {
    let bus: PrivateBus
    let server: DBusConnection
    let client: DBusConnection

    init() throws {
        bus = try PrivateBus()
        server = try DBusConnection.connect(address: bus.address)
        client = try DBusConnection.connect(address: bus.address)
        let server = server
        try server.registerObject(path: "/echo") { call in
            switch call.member {
            case "Echo": try? server.send(call.makeReturn(call.body))
            case "Fail": try? server.send(call.makeError(name: "com.example.Error.Failed", message: "it failed"))
            case "Ignore": break
            default:
                try? server.send(
                    call.makeError(name: "org.freedesktop.DBus.Error.UnknownMethod", message: "no such method"))
            }
        }
    }

    deinit {
        client.close()
        server.close()
        bus.stop()
    }

    /// Calls `member` on the echo object.
    func call(_ member: String, _ body: [DBusValue] = [], timeout: Duration = .seconds(10)) async throws(DBusError) -> DBusMessage {
        try await client.call(
            .methodCall(destination: server.uniqueName, path: "/echo", interface: "com.example.Echo", member: member, body: body),
            timeout: timeout)
    }

    /// Sends `body` through the bus and back.
    func echo(_ body: [DBusValue]) async throws(DBusError) -> [DBusValue] {
        try await call("Echo", body).body
    }
}

/// Collects messages handed to a handler, with their arrival time.
final class Collector: Sendable {
    private let items = Mutex<[(DBusMessage, ContinuousClock.Instant)]>([])

    func add(_ message: DBusMessage) {
        let now = ContinuousClock.now
        items.withLock { $0.append((message, now)) }
    }

    var all: [(DBusMessage, ContinuousClock.Instant)] { items.withLock { $0 } }

    /// Waits until `predicate` holds for a collected message, or `timeout` passes.
    func wait(
        timeout: Duration = .seconds(5), _ predicate: (DBusMessage) -> Bool
    ) async -> (DBusMessage, ContinuousClock.Instant)? {
        let deadline = ContinuousClock.now + timeout
        while ContinuousClock.now < deadline {
            if let hit = all.first(where: { predicate($0.0) }) { return hit }
            try? await Task.sleep(for: .milliseconds(5))
        }
        return all.first(where: { predicate($0.0) })
    }
}
