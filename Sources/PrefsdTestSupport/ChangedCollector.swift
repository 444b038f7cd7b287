import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

/// One `Changed` or `VolatileChanged` signal as a test sees it: as prefsd sent it, its
/// invalidated keys not re-read.
public struct ReceivedChange: Sendable {
    /// `Changed` or `VolatileChanged`.
    public var member: String
    public var domain: String
    public var changed: [String: PropertyListValue]
    public var removed: [String]
    public var invalidated: [String]
    /// The marshalled size of the signal's body.
    public var bodyBytes: Int
    /// The serial prefsd gave the signal: lower than that of any reply it sent after it.
    public var serial: UInt32

    init(_ change: DomainChange, member: String) {
        self.member = member
        domain = change.domain
        changed = change.changed
        removed = change.removed
        invalidated = change.invalidated
        serial = change.serial
        // The service sends each value in its one canonical D-Bus type, so the body built
        // again from the parsed change has the size of the one that travelled.
        bodyBytes =
            DBusValue.structure([
                .string(change.domain), PropertyListValue.dictionary(change.changed).dbusValue,
                .stringArray(change.removed), .stringArray(change.invalidated),
            ]).marshalledSize
    }
}

/// Collects the `Changed` (and `VolatileChanged`) signals a connection receives, through
/// the proxy: only those prefsd itself sent, in order, as they were sent.
public final class ChangedCollector: Sendable {
    private let received = Locked<[ReceivedChange]>([])
    private let proxy: PreferencesProxy
    private let subscription: PreferencesSubscription

    /// The connection the signals arrive on, kept open as long as the collector.
    public var connection: DBusConnection { proxy.connection }

    /// Subscribes to `domains` on `connection` (the proxy takes over its signal handler).
    public init(connection: DBusConnection, domains: [String]) async throws {
        proxy = PreferencesProxy(connection: connection)
        subscription = try await proxy.observe(domains, resolving: false) { [received] event in
            switch event {
            case .changed(let change):
                received.withLock { $0.append(ReceivedChange(change, member: PreferencesBus.changedSignal)) }
            case .volatileChanged(let change):
                received.withLock { $0.append(ReceivedChange(change, member: PreferencesBus.volatileChangedSignal)) }
            default:
                break
            }
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
