import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// A Flatpak application (a client under bubblewrap with a `/.flatpak-info` for
/// org.example.Sandboxed, talking through `xdg-dbus-proxy --filter`) sees only its own
/// preferences, while a host client keeps full access.
@Suite("Per-application isolation of sandboxed applications")
struct SandboxIsolationTests {
    static let app = "org.example.Sandboxed"

    /// A fixture with what a host client stored in other domains, and the sandbox.
    private static func setUp() async throws -> (ServiceFixture, PreferencesProxy, FlatpakSandbox) {
        let fixture = try await ServiceFixture()
        let host = try PreferencesProxy.connect(address: fixture.bus.address)
        try await host.write("com.example.Other", "Secret", .string("host only"))
        try await host.write("NSGlobalDomain", "AppleLanguages", .array([.string("fr")]))
        try await host.write("org.example.SandboxedEvil", "Lookalike", .integer(1))
        try await host.setVolatileDomain("com.example.OtherVolatile", ["Session": .integer(7)])
        return (fixture, host, try FlatpakSandbox(fixture: fixture, applicationID: app))
    }

    @Test("a sandboxed app reads and writes its own domain and suites, and reads NSGlobalDomain")
    func ownDomains() async throws {
        let (fixture, host, sandbox) = try await Self.setUp()
        defer { host.close(); _ = fixture }

        #expect(try sandbox.prefs("write", Self.app, "Size", "-int", "3").status == 0)
        #expect(try sandbox.prefs("read", Self.app, "Size").stdout == "3\n")
        #expect(try sandbox.prefs("write", "\(Self.app).Suite", "Theme", "dark").status == 0)
        #expect(try sandbox.prefs("read", "\(Self.app).Suite", "Theme").stdout == "dark\n")
        #expect(try sandbox.prefs("volatile", "set", Self.app, "{ Window = 2; }").status == 0)
        #expect(try sandbox.prefs("volatile", "read", Self.app, "Window").stdout == "2\n")
        let global = try sandbox.prefs("read", "-g", "AppleLanguages")
        #expect(global.status == 0, "\(global.stderr)")
        #expect(global.stdout.contains("fr"))
        // Its lists show what it may read, and nothing else.
        #expect(try sandbox.prefs("domains").stdout == "NSGlobalDomain\n\(Self.app)\n\(Self.app).Suite\n")
        #expect(try sandbox.prefs("volatile", "list").stdout == "\(Self.app)\n")
        // `find` walks every domain the lists give: the host's secret is not among them.
        #expect(try sandbox.prefs("find", "host only").status == 1)

        // The host sees what the app wrote, and everything else.
        #expect(try await host.read(Self.app, "Size") == .integer(3))
        #expect(try await host.read("\(Self.app).Suite", "Theme") == .string("dark"))
        #expect(try await host.domains() == ["NSGlobalDomain", "com.example.Other", Self.app, "\(Self.app).Suite", "org.example.SandboxedEvil"])
        #expect(try await host.volatileDomains() == ["com.example.OtherVolatile", Self.app])
    }

    @Test("every other domain, persistent or volatile, is refused with AccessDenied")
    func otherDomainsRefused() async throws {
        let (fixture, host, sandbox) = try await Self.setUp()
        defer { host.close(); _ = fixture }

        let refused: [[String]] = [
            ["read", "com.example.Other", "Secret"],
            ["read", "com.example.Other"],
            ["write", "com.example.Other", "Secret", "stolen"],
            ["delete", "com.example.Other", "Secret"],
            ["write", "com.example.Other", "{ Secret = stolen; }"],
            ["read", "org.example.SandboxedEvil", "Lookalike"],  // a longer name is not a suite
            ["write", "-g", "AppleLanguages", "(en)"],  // NSGlobalDomain is read-only
            ["is-forced", "com.example.Other", "Secret"],
            ["volatile", "read", "com.example.OtherVolatile"],
            ["volatile", "set", "com.example.Another", "{ a = 1; }"],
        ]
        for arguments in refused {
            let result = try runCommand("bwrap", try sandbox.commandLine([ServiceFixture.prefsBinary.path] + arguments))
            #expect(result.status == 5, "prefs \(arguments.joined(separator: " ")): \(result.status) \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("org.example.Sandboxed"), "prefs \(arguments.joined(separator: " ")): \(result.stderr)")
        }
        // `prefs delete DOMAIN` and `volatile remove` look in the lists first (where the
        // app sees no such domain), so the calls themselves are made with the proxy.
        let probe = ServiceFixture.executable("sandbox-probe").path
        for mode in ["remove-domain", "remove-volatile"] {
            for domain in ["com.example.Other", "com.example.OtherVolatile", "NSGlobalDomain"] {
                let result = try runCommand("bwrap", try sandbox.commandLine([probe, mode, domain]))
                #expect(
                    result.stdout.hasPrefix("error accessDenied") && result.stdout.contains("org.example.Sandboxed"),
                    "\(mode) \(domain): \(result.stdout) \(result.stderr)")
            }
        }
        // Lookup skips the domains the app may not read.
        let lookup = try runCommand("bwrap", try sandbox.commandLine([probe, "lookup", "Secret", "com.example.Other", "NSGlobalDomain"]))
        #expect(lookup.stdout.hasPrefix("error notFound"), "\(lookup.stdout) \(lookup.stderr)")
        let global = try runCommand("bwrap", try sandbox.commandLine([probe, "lookup", "AppleLanguages", "com.example.Other", "NSGlobalDomain"]))
        #expect(global.stdout.hasPrefix("found NSGlobalDomain (") && global.stdout.contains("fr"), "\(global.stdout) \(global.stderr)")
        // Nothing changed.
        #expect(try await host.read("com.example.Other", "Secret") == .string("host only"))
        #expect(try await host.read("NSGlobalDomain", "AppleLanguages") == .array([.string("fr")]))
        #expect(try await host.readVolatileDomain("com.example.OtherVolatile") == ["Session": .integer(7)])
        #expect(try await host.volatileDomains() == ["com.example.OtherVolatile"])
    }

    @Test("the sandbox receives no signal about another domain while a host client writes them")
    func noSignalsOfOtherDomains() async throws {
        let (fixture, host, sandbox) = try await Self.setUp()
        defer { host.close(); _ = fixture }
        let probe = try sandbox.start([ServiceFixture.executable("sandbox-probe").path, "listen", Self.app])
        defer { probe.stop() }
        try await probe.waitForLine { $0 == "ready" }
        #expect(probe.lines.first == "endpoint \(SandboxBus.busName)")

        // The host changes other domains every way there is, and NSGlobalDomain (which the
        // app may read), then writes the sentinel into the app's own domain.
        try await host.write("com.example.Other", "Secret", .string("changed"))
        try await host.apply("com.example.Other", set: ["More": .integer(1)], remove: ["Secret"])
        try await host.write("org.example.SandboxedEvil", "Lookalike", .integer(2))
        try await host.removeDomain("com.example.Other")
        try await host.removeVolatileDomain("com.example.OtherVolatile")
        try await host.setVolatileDomain("com.example.OtherVolatile", ["Session": .integer(8)])
        try await host.write("NSGlobalDomain", "AppleLocale", .string("fr_FR"))
        try await host.write(Self.app, "Sentinel", .integer(1))

        // The sentinel reaches both listeners: the proxy library's subscription, and the
        // raw connection that would see any broadcast xdg-dbus-proxy let through.
        try await probe.waitForLine { $0 == "event changed \(Self.app) Sentinel" }
        try await probe.waitForLine { $0.hasPrefix("signal ") && $0.hasSuffix(" \(PreferencesBus.interface) Changed \(Self.app)") }
        let lines = probe.lines
        for line in lines {
            #expect(!line.contains("com.example.Other") && !line.contains("SandboxedEvil"), "the sandbox received: \(line)")
        }
        #expect(lines.contains("event changed NSGlobalDomain AppleLocale"))
        // Every signal prefsd sent it came from the door, addressed to it alone.
        let door = try await host.connection.call(
            .methodCall(
                destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                member: "GetNameOwner", body: [.string(SandboxBus.busName)])
        ).body.first?.stringValue
        for line in lines where line.contains(" \(PreferencesBus.interface) ") {
            #expect(line.hasPrefix("signal \(door ?? "?") "), "\(line)")
        }
    }

    @Test("the Preferences library finds the door by itself inside the sandbox")
    func preferencesLibrary() async throws {
        let (fixture, host, sandbox) = try await Self.setUp()
        defer { host.close(); _ = fixture }
        let probe = ServiceFixture.executable("preferences-probe").path
        let write = try runCommand("bwrap", try sandbox.commandLine([probe, "write", Self.app, "Size", "5"]))
        #expect(write.status == 0, "\(write.stderr)")
        #expect(try await host.read(Self.app, "Size") == .string("5"))  // old-style text has no numbers
        // NSGlobalDomain comes through the search list; another application's domain does not.
        let global = try runCommand("bwrap", try sandbox.commandLine([probe, "read", Self.app, "AppleLanguages"]))
        #expect(global.stdout.contains("fr"), "\(global.stdout) \(global.stderr)")
        let other = try runCommand("bwrap", try sandbox.commandLine([probe, "read", "com.example.Other", "Secret"]))
        #expect(other.stdout == "(nil)\n", "\(other.stdout) \(other.stderr)")

        // Its cache follows the host's writes through the door's signals.
        let watch = try sandbox.start([probe, "watch", Self.app, "Size", "1"])
        defer { watch.stop() }
        try await watch.waitForLine { $0 == "ready" }
        try await host.write(Self.app, "Size", .integer(6))
        try await watch.waitForLine { $0 == "Size=6" }
    }

    @Test("subscribing to another domain from the sandbox is refused")
    func subscriptionRefused() async throws {
        let (fixture, host, sandbox) = try await Self.setUp()
        defer { host.close(); _ = fixture }
        let monitor = try runCommand("bwrap", try sandbox.commandLine([ServiceFixture.prefsBinary.path, "monitor", "com.example.Other"]))
        #expect(monitor.status == 5, "\(monitor.stdout) \(monitor.stderr)")
        #expect(monitor.stderr.contains("org.example.Sandboxed"), "\(monitor.stderr)")
    }

    @Test("a host client keeps full access on the door's name too, and the door serves its XML")
    func hostAtTheDoor() async throws {
        let (fixture, host, _) = try await Self.setUp()
        defer { host.close(); _ = fixture }
        let connection = try fixture.connect()
        defer { connection.close() }
        let read = try await connection.call(
            .methodCall(
                destination: SandboxBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                member: PreferencesMethod.read.rawValue, body: [.string("com.example.Other"), .string("Secret")]))
        #expect(read.body == [.variant(.string("host only"))])
        let xml =
            try await connection.call(
                .methodCall(
                    destination: SandboxBus.busName, path: PreferencesBus.objectPath, interface: StandardInterface.introspectable,
                    member: "Introspect")
            ).body.first?.stringValue ?? ""
        #expect(xml == (try Self.doorXML()))
        // The door's methods are there with the XML's signature.
        for member in [SandboxBus.subscribeMethod, SandboxBus.unsubscribeMethod] {
            let refusal = await Self.refusal {
                _ = try await connection.call(
                    .methodCall(
                        destination: SandboxBus.busName, path: PreferencesBus.objectPath, interface: SandboxBus.interface, member: member))
            }
            #expect(refusal == StandardErrorName.invalidArgs, "\(member)")
        }
    }

    @Test("one peer may subscribe to at most 256 domains at the door")
    func subscriptionCap() async throws {
        let fixture = try await ServiceFixture()
        let connection = try fixture.connect()
        defer { connection.close() }
        func subscribe(_ domains: [String]) async throws {
            _ = try await connection.call(
                .methodCall(
                    destination: SandboxBus.busName, path: PreferencesBus.objectPath, interface: SandboxBus.interface,
                    member: SandboxBus.subscribeMethod, body: [.stringArray(domains)]))
        }
        try await subscribe((0..<200).map { "com.example.D\($0)" })
        try await subscribe((0..<200).map { "com.example.D\($0)" })  // the same ones again: no more
        try await subscribe((200..<256).map { "com.example.D\($0)" })
        #expect(await Self.refusal { try await subscribe(["com.example.OneTooMany"]) } == StandardErrorName.limitsExceeded)
        #expect(await Self.refusal { try await subscribe(["bad/name"]) } == PreferencesErrorName.invalidName.busName)
        // Unsubscribing makes room again.
        _ = try await connection.call(
            .methodCall(
                destination: SandboxBus.busName, path: PreferencesBus.objectPath, interface: SandboxBus.interface,
                member: SandboxBus.unsubscribeMethod, body: [.stringArray(["com.example.D0"])]))
        try await subscribe(["com.example.OneTooMany"])
    }

    /// The D-Bus error name `body` was answered with, or `nil` when it succeeded.
    static func refusal(_ body: () async throws -> Void) async -> String? {
        do {
            try await body()
            return nil
        } catch let error as DBusError where error.code == .remote {
            return error.name ?? ""
        } catch {
            return "\(error)"
        }
    }

    /// The XML the door must serve, from the files in `Introspection/`: the preferences
    /// object's with the door's interface (and its comment) added before `</node>`.
    static func doorXML() throws -> String {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let main = try String(contentsOf: root.appendingPathComponent("Introspection/io.github.prefsd.Preferences1.xml"), encoding: .utf8)
        let door = try String(contentsOf: root.appendingPathComponent("Introspection/io.github.prefsd.Sandboxed1.xml"), encoding: .utf8)
        let inner = door.components(separatedBy: "<node>\n")[1].components(separatedBy: "</node>")[0]
        let parts = main.components(separatedBy: "</node>")
        return parts.dropLast().joined(separator: "</node>") + inner + "</node>" + (parts.last ?? "")
    }
}

@Suite("Calls wait for their sender to be identified")
struct CallerGateTests {
    @Test("a new sender's calls sent without waiting run in the order sent")
    func heldInOrder() async throws {
        let fixture = try await ServiceFixture()
        let connection = try fixture.connect()
        defer { connection.close() }
        // The first call is held while prefsd asks who this is; the others queue behind it.
        let answers = Locked<[Int]>([])
        let all = 100
        // Every call is counted when answered, refused ones too: one missing answer fails
        // the test at the deadline instead of hanging it.
        let answered = Locked(0)
        try await withDeadline(.seconds(60), "an answer to each of the \(all) writes") { (done: BoundedContinuation<Void>) in
            for index in 0..<all {
                connection.call(PreferencesCall.write("com.example.Order", "n", .integer(Int64(index))).message) { result in
                    if case .success = result { answers.withLock { $0.append(index) } }
                    if answered.withLock({
                        $0 += 1; return $0
                    }) == all {
                        done.resume()
                    }
                }
            }
        }
        #expect(answers.withLock { $0 } == Array(0..<all))
        let proxy = PreferencesProxy(connection: connection)
        #expect(try await proxy.read("com.example.Order", "n") == .integer(Int64(all - 1)))
    }

    @Test("the door's calls in the proxy match the door's Introspection XML")
    func doorCallsMatchXML() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let xml = try String(contentsOf: root.appendingPathComponent("Introspection/io.github.prefsd.Sandboxed1.xml"), encoding: .utf8)
        #expect(xml.contains("<interface name=\"\(SandboxBus.interface)\">"))
        for call in [PreferencesEndpoint.sandbox.followCall(domain: "a.b"), PreferencesEndpoint.sandbox.unfollowCall(domain: nil)] {
            #expect(call.destination == SandboxBus.busName && call.interface == SandboxBus.interface)
            #expect(xml.contains("<method name=\"\(call.member ?? "?")\">\n      <arg name=\"domains\" type=\"\(call.signature)\" direction=\"in\"/>"))
        }
        #expect(PreferencesEndpoint.host.followCall(domain: "a.b").member == "AddMatch")
        #expect(PreferencesEndpoint.current == .host, "the tests run on the host")
    }
}
