import PreferencesModel
import Testing

@testable import PreferencesService

/// The per-application usage behind the shares of each application, kept in step with
/// every change: by the host or the application, committed or failed, persistent or volatile.
@Suite("Per-application usage")
struct ApplicationUsageTests {
    static func name(_ raw: String) throws -> DomainName {
        try DomainName(raw)
    }

    /// Stages a change as `application` (nil: the host).
    static func write(_ state: inout DomainState, as application: String?, _ domain: String, _ key: String, _ value: PropertyListValue) throws -> Effect {
        if let application { state.followApplication(application) }
        state.actingApplication = application
        defer { state.actingApplication = nil }
        return try state.write(domain: try name(domain), key: key, value: value)
    }

    @Test("usage counts the application's own domain and suites, whoever wrote them; a failed batch gives its room back; X.Devel's domains count for X too")
    func accounting() throws {
        var limits = ServiceLimits.default
        limits.applicationStoreBytes = 10_000
        limits.applicationDomainCount = 2
        var state = DomainState(committed: [try Self.name("org.example.App"): ["old": .string(String(repeating: "o", count: 1_000))]], limits: limits)

        _ = try Self.write(&state, as: "org.example.App", "org.example.App.Suite", "k", .integer(1))
        let afterSuite = state.applications["org.example.App"]
        #expect(afterSuite?.domains == 2)
        #expect((afterSuite?.bytes ?? 0) > 1_000)
        // The host writes in the application's domain: it counts for the application.
        guard case .persistent(let batch) = try Self.write(&state, as: nil, "org.example.App", "host", .string(String(repeating: "h", count: 3_000))) else {
            Issue.record("no batch"); return
        }
        #expect((state.applications["org.example.App"]?.bytes ?? 0) > 4_000)
        // The application may not add a third domain, nor pass its bytes.
        #expect(throws: PreferencesServiceError.self) { try Self.write(&state, as: "org.example.App", "org.example.App.Third", "k", .integer(1)) }
        #expect(throws: PreferencesServiceError.self) {
            try Self.write(&state, as: "org.example.App", "org.example.App", "big", .string(String(repeating: "b", count: 6_000)))
        }
        // The host is not held to the application's share.
        _ = try Self.write(&state, as: nil, "org.example.App.Third", "k", .integer(1))
        #expect(state.applications["org.example.App"]?.domains == 3)
        // A failed batch gives back what it took.
        state.failed(batch)
        #expect((state.applications["org.example.App"]?.bytes ?? 0) < 4_000)
        // An application whose ID extends another's: its domains are also the other's suites.
        _ = try Self.write(&state, as: "org.example.App.Devel", "org.example.App.Devel", "k", .integer(1))
        #expect(state.applications["org.example.App.Devel"]?.domains == 1)
        #expect(state.applications["org.example.App"]?.domains == 4)
        // Volatile domains have their own count.
        limits.applicationVolatileDomainCount = 1
        var volatile = DomainState(committed: [:], limits: limits)
        volatile.followApplication("org.example.App")
        volatile.actingApplication = "org.example.App"
        _ = try volatile.setVolatileDomain(try Self.name("org.example.App.V1"), values: [:])
        #expect(throws: PreferencesServiceError.self) { try volatile.setVolatileDomain(try Self.name("org.example.App.V2"), values: [:]) }
        _ = volatile.removeVolatileDomain(try Self.name("org.example.App.V1"))
        #expect(volatile.applications["org.example.App"] == ApplicationUsage())
    }
}
