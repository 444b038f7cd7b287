import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// Collects the `Changed` signals a connection receives.
public final class ChangedCollector: Sendable {
    private let received = Locked<[(domain: String, changed: [String: PropertyListValue], removed: [String])]>([])

    /// The connection the signals arrive on, kept open as long as the collector.
    public let connection: DBusConnection

    public init(connection: DBusConnection, domains: [String]) async throws {
        self.connection = connection
        connection.setSignalHandler { [received] message in
            guard message.interface == PreferencesBus.interface, message.member == "Changed", message.body.count == 3,
                  case .string(let domain) = message.body[0],
                  let changed = try? PropertyListValue.dictionary(dbus: message.body[1]),
                  case .array(_, let removedValues) = message.body[2] else { return }
            let removed = removedValues.compactMap { if case .string(let key) = $0 { key } else { nil } }
            received.withLock { $0.append((domain, changed, removed)) }
        }
        for domain in domains {
            try await connection.addMatch(PreferencesBus.changedMatchRule(domain: domain))
        }
    }

    public var signals: [(domain: String, changed: [String: PropertyListValue], removed: [String])] {
        received.withLock { $0 }
    }

    /// Waits until `count` signals arrived (or a few seconds passed).
    public func wait(for count: Int) async throws {
        let deadline = ContinuousClock.now + .seconds(5)
        while received.withLock({ $0.count }) < count, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

