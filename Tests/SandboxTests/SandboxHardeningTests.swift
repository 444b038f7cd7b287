import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// Against a real prefsd on a private bus: application IDs
/// that name reserved domains, a client whose `.flatpak-info` is a FIFO, and writes sent
/// without waiting for the reply.
@Suite("Sandbox hardening over the bus")
struct SandboxHardeningTests {
    @Test("an application named after a reserved domain cannot change it")
    func reservedByID() async throws {
        let fixture = try await ServiceFixture()
        let host = try PreferencesProxy.connect(address: fixture.bus.address)
        defer { host.close() }
        try await host.write("io.github.prefsd.Portal", "ExposedDomains", .array([]))
        try await host.write("org.freedesktop.appearance", "color-scheme", .integer(2))

        let attempts: [(id: String, arguments: [String])] = [
            ("io.github.prefsd.Portal", ["write", "io.github.prefsd.Portal", "ExposedDomains", "(com.example.Other)"]),
            ("io.github.prefsd", ["write", "io.github.prefsd.Portal", "ExposedDomains", "(com.example.Other)"]),
            ("org.freedesktop.appearance", ["write", "org.freedesktop.appearance", "color-scheme", "-int", "1"]),
            ("org.freedesktop.appearance", ["read", "org.freedesktop.appearance", "color-scheme"]),
        ]
        for (id, arguments) in attempts {
            let sandbox = try FlatpakSandbox(fixture: fixture, applicationID: id)
            let result = try sandbox.prefs(arguments)
            #expect(result.status == 5, "\(id): prefs \(arguments.joined(separator: " ")): \(result.status) \(result.stdout) \(result.stderr)")
            #expect(result.stderr.contains("whatever its ID"), "\(id): \(result.stderr)")
        }
        #expect(try await host.read("io.github.prefsd.Portal", "ExposedDomains") == .array([]))
        #expect(try await host.read("org.freedesktop.appearance", "color-scheme") == .integer(2))
    }

    @Test("a .flatpak-info saying name=NSGlobalDomain is refused as not an application ID")
    func invalidApplicationID() async throws {
        let fixture = try await ServiceFixture()
        let host = try PreferencesProxy.connect(address: fixture.bus.address)
        defer { host.close() }
        try await host.write("NSGlobalDomain", "AppleLanguages", .array([.string("fr")]))
        for id in ["NSGlobalDomain", "org.example", "org.1example.App"] {
            let sandbox = try FlatpakSandbox(fixture: fixture, applicationID: id)
            let write = try sandbox.prefs(["write", "-g", "AppleLanguages", "(en)"])
            #expect(write.status == 5, "\(id): \(write.status) \(write.stdout) \(write.stderr)")
            #expect(write.stderr.contains("not a Flatpak application ID"), "\(id): \(write.stderr)")
            #expect(try sandbox.prefs(["read", id]).status == 5)
        }
        #expect(try await host.read("NSGlobalDomain", "AppleLanguages") == .array([.string("fr")]))
    }

    @Test("a client whose .flatpak-info is a FIFO is refused at once, and every other client is answered")
    func fifoFlatpakInfo() async throws {
        let fixture = try await ServiceFixture()
        let sandbox = try FlatpakSandbox(fixture: fixture, fifoNamed: "fifo")
        defer {
            // Lets an old prefsd's blocked open() go before the fixture stops it.
            let writer = open(sandbox.infoFile.path, O_WRONLY | O_NONBLOCK)
            if writer >= 0 { close(writer) }
        }
        // On the bus's socket itself, as from an unprivileged user namespace.
        let attacker = try runCommand(
            "bwrap",
            try sandbox.commandLine(
                [
                    "dbus-send", "--session", "--print-reply", "--reply-timeout=5000", "--dest=\(PreferencesBus.busName)",
                    PreferencesBus.objectPath, "\(PreferencesBus.interface).Read", "string:NSGlobalDomain", "string:k",
                ], throughProxy: false), timeout: .seconds(20))
        #expect(attacker.status != 0)
        #expect(attacker.stderr.contains("AccessDenied") && attacker.stderr.contains("FIFO"), "\(attacker.stderr)")
        // New clients, during and after: each answered within 5 s (before: never).
        for index in 0..<3 {
            let client = try fixture.connect()
            defer { client.close() }
            let reply = try await client.call(PreferencesCall.write("com.example.After", "n", .integer(Int64(index))).message, timeout: .seconds(5))
            #expect(reply.kind == .methodReturn)
        }
    }

    @Test("50 writes sent by dbus-send without --print-reply from the host all land")
    func fireAndForgetFromHost() async throws {
        let fixture = try await ServiceFixture()
        let count = 50
        for index in 0..<count {
            let result = try fixture.run(
                "dbus-send",
                [
                    "--session", "--type=method_call", "--dest=\(PreferencesBus.busName)", PreferencesBus.objectPath, "\(PreferencesBus.interface).Write",
                    "string:com.example.Script", "string:k\(index)", "variant:int32:\(index)",
                ])
            #expect(result.status == 0, "\(result.stderr)")
        }
        // Each dbus-send is gone before prefsd answers; its write lands all the same. They
        // come from 50 senders, in no order with this reader: wait until all are there.
        let host = try PreferencesProxy.connect(address: fixture.bus.address)
        defer { host.close() }
        let expected = Dictionary(uniqueKeysWithValues: (0..<count).map { ("k\($0)", PropertyListValue.integer(Int64($0))) })
        let deadline = ContinuousClock.now + .seconds(20)
        var stored: [String: PropertyListValue] = [:]
        while ContinuousClock.now < deadline {
            stored = (try? await host.readDomain("com.example.Script")) ?? [:]
            if stored.count == count { break }
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(stored == expected, "\(stored.count) of \(count) writes landed")
    }

    @Test("a sandboxed sender that leaves before it is identified gains nothing at the door")
    func vanishedSandboxedSender() async throws {
        let fixture = try await ServiceFixture(arguments: ["--log-level", "info"])
        let host = try PreferencesProxy.connect(address: fixture.bus.address)
        defer { host.close() }
        try await host.write("com.example.Other", "Secret", .string("host only"))
        let app = "org.example.Sandboxed"
        let sandbox = try FlatpakSandbox(fixture: fixture, applicationID: app)
        let rounds = 20
        func send(_ domain: String, _ key: String) -> String {
            "dbus-send --session --type=method_call --dest=\(SandboxBus.busName) \(PreferencesBus.objectPath) \(PreferencesBus.interface).Write string:\(domain) string:\(key)$i variant:int32:$i"
        }
        // Each dbus-send leaves at once; xdg-dbus-proxy then closes its connection to the bus,
        // often before prefsd has asked the bus which process it was.
        let script = "i=0; while [ $i -lt \(rounds) ]; do \(send("com.example.Other", "Stolen")); \(send(app, "Own")); i=$((i+1)); done"
        let result = try runCommand("bwrap", try sandbox.commandLine(["/bin/sh", "-c", script]), timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stderr)")
        // The sentinel: a new client's call at the door is identified after every call that
        // came in there before it (the bus answers prefsd's questions in order, and a sender
        // that left is judged as soon as the bus says so).
        let sentinel = try fixture.connect()
        defer { sentinel.close() }
        let read = try await sentinel.call(
            .methodCall(
                destination: SandboxBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                member: PreferencesMethod.read.rawValue, body: [.string("com.example.Other"), .string("Secret")]), timeout: .seconds(10))
        #expect(read.body == [.variant(.string("host only"))])
        #expect(try await host.readDomain("com.example.Other") == ["Secret": .string("host only")])
        let own = (try? await host.readDomain(app))?.count ?? 0
        let departed = fixture.log.components(separatedBy: "left before it was identified").count - 1
        print(
            "vanished sandboxed senders: \(own) of \(rounds) own-domain writes landed (identified in time); \(departed) senders had left before they were identified"
        )
    }

    @Test("--max-held-calls and --max-held-size: a positive number; calls past them are refused LimitsExceeded, the rest answered")
    func heldCallFlags() async throws {
        for flag in ["--max-held-calls", "--max-held-size"] {
            let result = try runCommand(ServiceFixture.binary.path, [flag, "0"])
            #expect(result.status == 64 && result.stderr.contains("\(flag) must be a positive number"), "\(flag): \(result.status) \(result.stderr)")
        }
        let fixture = try await ServiceFixture(arguments: ["--max-held-calls", "1"])
        let connection = try fixture.connect()
        defer { connection.close() }
        // 40 calls sent at once by a new client: the first is held while prefsd learns who
        // it is, and whichever arrive meanwhile are refused. How many depends on timing; each
        // is answered, with success or with the refusal naming the flag.
        let answers = Locked<[Result<DBusMessage, DBusError>]>([])
        let total = 40
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            for index in 0..<total {
                connection.call(PreferencesCall.write("com.example.Held", "k\(index)", .integer(Int64(index))).message) { result in
                    if answers.withLock({
                        $0.append(result); return $0.count
                    }) == total {
                        done.resume()
                    }
                }
            }
        }
        var refused = 0
        for answer in answers.withLock({ $0 }) {
            switch answer {
            case .success: continue
            case .failure(let error) where error.isRemote(named: "org.freedesktop.DBus.Error.LimitsExceeded") && error.message.contains("--max-held-calls"):
                refused += 1
            case .failure(let error): Issue.record("unexpected answer: \(error)")
            }
        }
        let host = PreferencesProxy(connection: connection)
        #expect(try await host.readDomain("com.example.Held").count == total - refused)
        print("--max-held-calls 1: \(refused) of \(total) calls sent at once were refused")
    }
}
