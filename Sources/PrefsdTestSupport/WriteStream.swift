import DBus
import PreferencesModel

/// Writers that stream writes to their own keys and record what was answered.
public struct WriteStream: Sendable {
    /// The value each acknowledged key was last written with.
    public let acknowledged = Locked<[String: Int64]>([:])
    /// How many writes were refused (and retried).
    public let refused = Locked(0)

    /// A stream with nothing written yet.
    public init() {}

    /// Starts `count` writers on `fixture`'s bus; each keeps writing (and survives refusals)
    /// until cancelled.
    public func start(_ fixture: ServiceFixture, writers count: Int, domain: String) -> [Task<Void, Never>] {
        (0..<count).map { writer in
            Task {
                guard let connection = try? fixture.connect() else { return }
                defer { connection.close() }
                let client = ServiceClient(connection: connection)
                var sequence: Int64 = 0
                while !Task.isCancelled {
                    sequence += 1
                    let key = "w\(writer)-\(sequence)"
                    do {
                        try await client.write(domain, key, .integer(sequence))
                        acknowledged.withLock { $0[key] = sequence }
                    } catch DBusError.disconnected {
                        return
                    } catch {
                        refused.withLock { $0 += 1 }
                        try? await Task.sleep(for: .milliseconds(2))
                    }
                }
            }
        }
    }

    /// The acknowledged keys missing from `stored`.
    public func missing(from stored: [String: PropertyListValue]) -> [String] {
        acknowledged.withLock { $0 }.filter { stored[$0.key] != .integer($0.value) }.map(\.key).sorted()
    }
}
