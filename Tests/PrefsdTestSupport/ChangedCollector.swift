import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// One `Changed` or `VolatileChanged` signal as a test sees it.
public struct ReceivedChange: Sendable {
    /// `Changed` or `VolatileChanged`.
    public var member: String
    public var domain: String
    public var changed: [String: PropertyListValue]
    public var removed: [String]
    public var invalidated: [String]
    /// The marshalled size of the signal's body.
    public var bodyBytes: Int
}

/// Collects the `Changed` (and `VolatileChanged`) signals a connection receives.
public final class ChangedCollector: Sendable {
    private let received = Locked<[ReceivedChange]>([])

    /// The connection the signals arrive on, kept open as long as the collector.
    public let connection: DBusConnection

    public init(connection: DBusConnection, domains: [String]) async throws {
        self.connection = connection
        connection.setSignalHandler { [received] message in
            guard message.interface == PreferencesBus.interface,
                  let member = message.member,
                  member == PreferencesBus.changedSignal || member == PreferencesBus.volatileChangedSignal,
                  message.body.count == 4,
                  case .string(let domain) = message.body[0],
                  let changed = try? PropertyListValue.dictionary(dbus: message.body[1]),
                  case .array(_, let removedValues) = message.body[2],
                  case .array(_, let invalidatedValues) = message.body[3] else { return }
            let change = ReceivedChange(
                member: member, domain: domain, changed: changed,
                removed: removedValues.compactMap(\.stringValue), invalidated: invalidatedValues.compactMap(\.stringValue),
                bodyBytes: DBusValue.structure(message.body).marshalledSize
            )
            received.withLock { $0.append(change) }
        }
        for domain in domains {
            try await connection.addMatch(PreferencesBus.domainMatchRule(domain: domain))
        }
    }

    public var signals: [ReceivedChange] {
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
