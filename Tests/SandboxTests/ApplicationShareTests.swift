import Foundation
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// Each sandboxed application has its own share of every limit,
/// counted over all its domains (its own and its suites) and all its connections; one
/// that reaches its share is refused, while the host and another application still write.
@Suite("Per-application shares of the limits")
struct ApplicationShareTests {
    static let greedy = "org.example.Greedy"
    static let other = "org.example.Modest"
    /// Small shares, so that a few calls reach them; the global limits stay the defaults.
    static let flags = [
        "--max-app-store-size", "20000", "--max-app-domains", "3",
        "--max-app-volatile-size", "4000", "--max-app-volatile-domains", "2", "--max-app-subscriptions", "300",
    ]

    /// Checks that `result` is a refusal with `QuotaExceeded` (the `prefs` exit status 4)
    /// naming `flag`.
    static func expectQuota(_ result: (status: Int32, stdout: String, stderr: String), _ flag: String, _ what: String) {
        #expect(result.status == 4, "\(what) was not refused QuotaExceeded: status \(result.status), \(result.stderr)")
        #expect(result.stderr.contains(flag), "\(what): the refusal does not name \(flag): \(result.stderr)")
    }

    /// Fills an application's shares in its sandbox: bytes, domains, volatile domains
    /// and bytes, subscriptions over two connections. Returns after checking each refusal.
    static func fillShares(_ sandbox: FlatpakSandbox, _ app: String) throws {
        let big = String(repeating: "x", count: 15_000)
        #expect(try sandbox.prefs("write", app, "Big", big).status == 0)
        #expect(try sandbox.prefs("write", "\(app).One", "k", "v").status == 0)
        #expect(try sandbox.prefs("write", "\(app).Two", "k", "v").status == 0)
        expectQuota(try sandbox.prefs("write", "\(app).Three", "k", "v"), "--max-app-domains", "a fourth domain")
        expectQuota(try sandbox.prefs("write", "\(app).One", "Big", String(repeating: "y", count: 8_000)), "--max-app-store-size", "bytes past the share")
        // Within the share, writes go on; a domain removed gives its room back.
        #expect(try sandbox.prefs("write", "\(app).One", "k", "w").status == 0)
        #expect(try sandbox.prefs("delete", "\(app).Two").status == 0)
        #expect(try sandbox.prefs("write", "\(app).Three", "k", "v").status == 0)

        #expect(try sandbox.prefs("volatile", "set", "\(app).V1", "{ a = 1; }").status == 0)
        #expect(try sandbox.prefs("volatile", "set", "\(app).V2", "{ a = 1; }").status == 0)
        expectQuota(try sandbox.prefs("volatile", "set", "\(app).V3", "{ a = 1; }"), "--max-app-volatile-domains", "a third volatile domain")
        #expect(try sandbox.prefs("volatile", "remove", "\(app).V2").status == 0)
        expectQuota(
            try sandbox.prefs("volatile", "set", "\(app).V4", "{ a = \"\(String(repeating: "z", count: 5_000))\"; }"),
            "--max-app-volatile-size", "volatile bytes past the share")
    }

    @Test(
        "an application that reaches its share of bytes, domains, volatile domains and bytes, and subscriptions is refused; the host and another application still write"
    )
    func shares() async throws {
        let fixture = try await ServiceFixture(arguments: Self.flags)
        let host = try PreferencesProxy.connect(address: fixture.bus.address)
        defer { host.close() }
        let greedy = try FlatpakSandbox(fixture: fixture, applicationID: Self.greedy)
        try Self.fillShares(greedy, Self.greedy)

        // Subscriptions: two connections of 200 domains each pass the share of 300.
        let probe = ServiceFixture.executable("sandbox-probe").path
        let subscribed = try runCommand("bwrap", try greedy.commandLine([probe, "subscribe", "2", "200", Self.greedy]))
        #expect(subscribed.stdout.contains("subscribed 0"), "\(subscribed.stdout) \(subscribed.stderr)")
        #expect(
            subscribed.stdout.contains("refused 1 org.freedesktop.DBus.Error.LimitsExceeded") && subscribed.stdout.contains("--max-app-subscriptions"),
            "a second connection of the same application passed its share: \(subscribed.stdout) \(subscribed.stderr)")

        // The host is not locked out: its writes go past any one application's share.
        try await host.write("com.example.Host", "Big", .string(String(repeating: "h", count: 30_000)))
        for index in 0..<5 { try await host.write("com.example.Host.D\(index)", "k", .integer(1)) }
        try await host.setVolatileDomain("com.example.HostVolatile", ["a": .string(String(repeating: "h", count: 5_000))])
        // Nor is another application: it has a share of its own.
        let modest = try FlatpakSandbox(fixture: fixture, applicationID: Self.other)
        try Self.fillShares(modest, Self.other)
        let own = try runCommand("bwrap", try modest.commandLine([probe, "subscribe", "1", "200", Self.other]))
        #expect(own.stdout.contains("subscribed 0"), "another application's subscriptions were refused: \(own.stdout) \(own.stderr)")

        // What the shares refused was never stored.
        #expect(try await host.domains().filter { $0.hasPrefix(Self.greedy) } == [Self.greedy, "\(Self.greedy).One", "\(Self.greedy).Three"])
        #expect(try await host.read("\(Self.greedy).One", "k") == .string("w"))
    }

    @Test(
        "with the default shares, one application filling everything it may stops at 1,000 domains, 64 MiB, 100 volatile domains and 8 MiB; the host and another application still write"
    )
    func defaultShares() async throws {
        let fixture = try await ServiceFixture()
        let host = try PreferencesProxy.connect(address: fixture.bus.address)
        defer { host.close() }
        let greedy = try FlatpakSandbox(fixture: fixture, applicationID: Self.greedy)
        let probe = ServiceFixture.executable("sandbox-probe").path
        let filled = try runCommand("bwrap", try greedy.commandLine([probe, "fill", Self.greedy]))
        let lines = filled.stdout.split(separator: "\n").map(String.init)
        #expect(lines.last == "done", "the probe did not finish: \(filled.stdout) \(filled.stderr)")
        /// The count, bytes and refusal of one kind.
        func figures(_ kind: String) -> (count: Int, bytes: Int, line: String) {
            guard let line = lines.first(where: { $0.hasPrefix("filled \(kind) ") }) else { return (-1, -1, "") }
            let fields = line.split(separator: " ")
            return (Int(fields[2]) ?? -1, Int(fields[3]) ?? -1, line)
        }
        let domains = figures("domains"), bytes = figures("bytes")
        let volatileDomains = figures("volatile-domains"), volatileBytes = figures("volatile-bytes")
        #expect(domains.count == 1_000 && domains.line.contains("quotaExceeded") && domains.line.contains("--max-app-domains"), "\(domains.line)")
        #expect(bytes.count > 0 && bytes.bytes <= 64 << 20 && bytes.line.contains("--max-app-store-size"), "\(bytes.line)")
        #expect(volatileDomains.count == 100 && volatileDomains.line.contains("--max-app-volatile-domains"), "\(volatileDomains.line)")
        #expect(volatileBytes.count > 0 && volatileBytes.bytes <= 8 << 20 && volatileBytes.line.contains("--max-app-volatile-size"), "\(volatileBytes.line)")

        // Subscriptions: four connections of 256 domains (each peer's most) take the
        // share of 1,024; a fifth connection is refused.
        let subscribed = try runCommand("bwrap", try greedy.commandLine([probe, "subscribe", "5", "256", Self.greedy]))
        #expect((0..<4).allSatisfy { subscribed.stdout.contains("subscribed \($0)\n") }, "\(subscribed.stdout) \(subscribed.stderr)")
        #expect(subscribed.stdout.contains("refused 4 org.freedesktop.DBus.Error.LimitsExceeded"), "a fifth connection passed the share: \(subscribed.stdout)")

        // The host and another application are not locked out.
        try await host.write("com.example.Host", "Big", .data(Data(repeating: 1, count: 1_000_000)))
        try await host.write("com.example.Host.New", "k", .integer(1))
        try await host.setVolatileDomain("com.example.HostVolatile", ["k": .data(Data(repeating: 1, count: 500_000))])
        let modest = try FlatpakSandbox(fixture: fixture, applicationID: Self.other)
        #expect(try modest.prefs("write", Self.other, "k", "v").status == 0)
        #expect(try modest.prefs("volatile", "set", "\(Self.other).V", "{ a = 1; }").status == 0)
        for line in lines where line.hasPrefix("filled") { print("sandbox.share \(line.prefix(160))") }
    }
}
