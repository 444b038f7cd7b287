import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

@Suite("Proxy calls")
struct ProxyCallTests {
    @Test("every method round-trips through the proxy against a real prefsd")
    func roundTrips() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close() }
        let domain = "com.example.Proxy"

        try await proxy.write(domain, "FontSize", .integer(14))
        #expect(try await proxy.read(domain, "FontSize") == .integer(14))
        #expect(try await proxy.readIfPresent(domain, "Missing") == nil)
        try await proxy.apply(domain, set: ["Theme": .string("dark"), "When": .date(secondsSince1970: 1_700_000_000.5)], remove: ["FontSize"])
        #expect(try await proxy.readDomain(domain) == ["Theme": .string("dark"), "When": .date(secondsSince1970: 1_700_000_000.5)])
        #expect(try await proxy.domains() == [domain])
        #expect(try await proxy.lookup(["com.example.None", domain], "Theme") == PreferencesLookup(domain: domain, value: .string("dark")))
        #expect(try await proxy.isForced(domain, "Theme") == false)
        #expect(try await proxy.forcedKeys(domain) == [])
        try await proxy.remove(domain, "When")
        try await proxy.replaceDomain(domain, ["Only": .boolean(true)])
        #expect(try await proxy.readDomain(domain) == ["Only": .boolean(true)])
        try await proxy.removeDomain(domain)
        #expect(try await proxy.domains() == [])

        try await proxy.setVolatileDomain("com.example.Session", ["k": .string("v")])
        #expect(try await proxy.volatileDomains() == ["com.example.Session"])
        #expect(try await proxy.readVolatileDomain("com.example.Session") == ["k": .string("v")])
        try await proxy.removeVolatileDomain("com.example.Session")
        #expect(try await proxy.volatileDomains() == [])

        #expect(try await proxy.version().hasPrefix("0."))
        // The blocking form of the same requests, from a thread that may block.
        let blocking = try await Task.detached {
            try proxy.performBlocking(PreferencesCall.write(domain, "b", .string("x")))
            return try proxy.performBlocking(PreferencesCall.read(domain, "b"))
        }.value
        #expect(blocking == .string("x"))
        // The completion form, as a cache writing in the background uses it.
        let answered = try await withDeadline(.seconds(30), "the write's completion") { (done: BoundedContinuation<Result<Void, PreferencesProxyError>>) in
            proxy.perform(PreferencesCall.write("bad/name", "k", .integer(1))) { done.resume(returning: $0) }
        }
        guard case .failure(.refused(.invalidName)) = answered else {
            Issue.record("a write with a bad domain name answered \(answered)")
            return
        }
    }

    @Test("ApplyIf applies only on the expected values; update retries until it wins, losing no concurrent change")
    func atomicUpdates() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close() }
        let domain = "com.example.Atomic"
        try await proxy.write(domain, "list", .array([]))
        #expect(try await proxy.applyIf(domain, expected: ["list": .array([.integer(9)])], set: ["list": .string("no")]) == false)
        #expect(try await proxy.applyIf(domain, expected: [:], absent: ["list"], set: ["list": .string("no")]) == false)
        #expect(try await proxy.read(domain, "list") == .array([]))
        #expect(try await proxy.applyIf(domain, expected: ["list": .array([])], absent: ["new"], set: ["new": .integer(1)]) == true)
        #expect(try await proxy.read(domain, "new") == .integer(1))

        // Four writers, each on its own connection, append 15 items each to one array.
        let writers = 4, items = 15
        try await withThrowingTaskGroup(of: Void.self) { group in
            for writer in 0..<writers {
                let own = PreferencesProxy(connection: try fixture.connect())
                group.addTask {
                    defer { own.close() }
                    for item in 0..<items {
                        try await own.update(domain, keys: ["list"], attempts: 100) { current in
                            guard case .array(let list)? = current["list"] else { return PreferencesBatch() }
                            return PreferencesBatch(set: ["list": .array(list + [.integer(Int64(writer * 100 + item))])])
                        }
                    }
                }
            }
            try await group.waitForAll()
        }
        guard case .array(let list) = try await proxy.read(domain, "list") else {
            Issue.record("list is no longer an array")
            return
        }
        #expect(list.count == writers * items)
        #expect(Set(list).count == writers * items)
    }

    @Test("errors map to one enum: NotFound, InvalidName, InvalidValue, InvalidArgs, Exists")
    func serviceErrors() async throws {
        let fixture = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close() }
        await #expect(throws: PreferencesProxyError.self) { _ = try await proxy.read("com.example.None", "k") }
        do {
            _ = try await proxy.read("com.example.None", "k")
        } catch {
            guard case .refused(.notFound) = error else { Issue.record("Read of an absent key: \(error)"); return }
        }
        await Self.expect(PreferencesRefusal.invalidName, try await proxy.write("bad/name", "k", .integer(1)))
        await Self.expect(PreferencesRefusal.invalidArguments, try await proxy.apply("com.example.A", set: ["k": .integer(1)], remove: ["k"]))
        try await proxy.setVolatileDomain("com.example.V", [:])
        await Self.expect(PreferencesRefusal.exists, try await proxy.setVolatileDomain("com.example.V", [:]))
    }

    @Test("no prefsd, no activation: every call is serviceUnavailable with an actionable message")
    func unavailable() async throws {
        let fixture = try await ServiceFixture()
        fixture.stopService()
        let proxy = PreferencesProxy(connection: try fixture.connect())
        defer { proxy.close() }
        do {
            _ = try await proxy.domains()
            Issue.record("Domains answered without prefsd")
        } catch {
            #expect(error.isServiceUnavailable, "\(error)")
            #expect(error.description.contains("prefsd"))
        }
        // No bus at all.
        #expect(throws: PreferencesProxyError.self) { try PreferencesProxy.connect(address: "unix:path=/nonexistent/bus") }
    }

    @Test("each D-Bus error name maps by one rule")
    func errorNames() {
        let unavailable = [
            "org.freedesktop.DBus.Error.ServiceUnknown", "org.freedesktop.DBus.Error.NameHasNoOwner",
            "org.freedesktop.DBus.Error.NoReply", "org.freedesktop.DBus.Error.Timeout",
            "org.freedesktop.DBus.Error.Disconnected", "org.freedesktop.DBus.Error.Spawn.ExecFailed",
        ]
        for name in unavailable {
            #expect(PreferencesProxyError(errorName: name, message: "m").isServiceUnavailable, "\(name)")
        }
        #expect(PreferencesProxyError(DBusError(code: .noSessionBus)).isServiceUnavailable)
        #expect(PreferencesProxyError(DBusError(code: .disconnected)).isServiceUnavailable)
        let cases: [(String, PreferencesProxyError)] = [
            ("io.github.prefsd.Preferences1.Error.NotFound", PreferencesProxyError(.notFound("m"))),
            ("io.github.prefsd.Preferences1.Error.InvalidName", PreferencesProxyError(.invalidName("m"))),
            ("io.github.prefsd.Preferences1.Error.InvalidValue", PreferencesProxyError(.invalidValue("m"))),
            ("io.github.prefsd.Preferences1.Error.Forced", PreferencesProxyError(.forced("m"))),
            ("io.github.prefsd.Preferences1.Error.Exists", PreferencesProxyError(.exists("m"))),
            ("io.github.prefsd.Preferences1.Error.QuotaExceeded", PreferencesProxyError(.quotaExceeded("m"))),
            ("io.github.prefsd.Preferences1.Error.StorageFailed", PreferencesProxyError(.storageFailed("m"))),
            ("io.github.prefsd.Preferences1.Error.AccessDenied", PreferencesProxyError(.accessDenied("m"))),
            ("org.freedesktop.DBus.Error.AccessDenied", PreferencesProxyError(.accessDenied("m"))),
            ("org.freedesktop.DBus.Error.InvalidArgs", PreferencesProxyError(PreferencesRefusal.invalidArguments("m"))),
            ("org.freedesktop.DBus.Error.LimitsExceeded", .limitsExceeded("m")),
            ("com.example.Other", .busError(name: "com.example.Other", message: "m")),
        ]
        for (name, expected) in cases {
            #expect(PreferencesProxyError(errorName: name, message: "m") == expected, "\(name)")
        }
    }

    /// Expects `body` to fail with prefsd's refusal `expected` (its message aside).
    static func expect(
        _ expected: (String) -> PreferencesRefusal, _ body: @autoclosure () async throws(PreferencesProxyError) -> Void,
        sourceLocation: SourceLocation = #_sourceLocation
    ) async {
        do {
            try await body()
            Issue.record("succeeded; expected \(expected(""))", sourceLocation: sourceLocation)
        } catch {
            #expect(error.refusal?.name == expected("").name, "got \(error)", sourceLocation: sourceLocation)
        }
    }
}
