import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

@Suite("prefs monitor")
struct MonitorTests {
    /// Starts `prefs monitor` with `arguments`, its output going to a file.
    private func startMonitor(_ fixture: ServiceFixture, _ arguments: [String]) throws -> (Process, URL) {
        let output = fixture.bus.directory.appendingPathComponent("monitor-\(UUID().uuidString).out")
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        let process = Process()
        process.executableURL = ServiceFixture.prefsBinary
        process.arguments = ["monitor"] + arguments
        var environment = helperEnvironment
        environment["DBUS_SESSION_BUS_ADDRESS"] = fixture.bus.address
        process.environment = environment
        process.standardOutput = try FileHandle(forWritingTo: output)
        process.standardError = FileHandle.nullDevice
        process.standardInput = FileHandle.nullDevice
        try process.run()
        return (process, output)
    }

    /// Runs `write` (another process each time) until the monitor has printed a line
    /// containing `expected`: the monitor has no way to say it has subscribed.
    private func writeUntilSeen(_ fixture: ServiceFixture, output: URL, expected: String, write: (Int) throws -> Void) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(15)
        var attempt = 0
        while ContinuousClock.now < deadline {
            try write(attempt)
            attempt += 1
            for _ in 0..<25 {
                let text = (try? String(contentsOf: output, encoding: .utf8)) ?? ""
                if text.contains(expected) { return text }
                try await Task.sleep(for: .milliseconds(20))
            }
        }
        throw FixtureError("prefs monitor printed no line containing \(expected)")
    }

    private func stop(_ process: Process, signal number: Int32) async -> Int32? {
        kill(process.processIdentifier, number)
        let deadline = ContinuousClock.now + .seconds(10)
        while process.isRunning, ContinuousClock.now < deadline { try? await Task.sleep(for: .milliseconds(20)) }
        if process.isRunning {
            BusTestSupport.stop(process, signal: SIGKILL)
            return nil
        }
        return process.terminationStatus
    }

    @Test("monitor prints one line per change another process makes, only for its domains, and stops on SIGTERM")
    func seesOtherProcess() async throws {
        let fixture = try await ServiceFixture()
        let (monitor, output) = try startMonitor(fixture, ["com.example.Watch", "-g"])
        let text = try await writeUntilSeen(fixture, output: output, expected: "com.example.Watch: FontSize = ") { attempt in
            expectSuccess(try fixture.prefs("write", "com.example.Other", "Ignored", "-int", String(attempt)))
            expectSuccess(try fixture.prefs("write", "com.example.Watch", "FontSize", "-int", String(attempt)))
        }
        #expect(!text.contains("com.example.Other"))
        // Now subscribed for sure (it printed a line): another domain's change must be
        // filtered out, and the delete after it is the sentinel.
        expectSuccess(try fixture.prefs("write", "com.example.Other", "Ignored", "-int", "-1"))
        expectSuccess(try fixture.prefs("write", "-g", "Languages", "-array", "en", "fr"))
        expectSuccess(try fixture.prefs("delete", "com.example.Watch", "FontSize"))
        let later = try await writeUntilSeen(fixture, output: output, expected: "com.example.Watch: removed FontSize") { _ in }
        #expect(later.contains("NSGlobalDomain: Languages = (\"en\", \"fr\")\n"))
        #expect(later.split(separator: "\n").allSatisfy { $0.hasPrefix("com.example.Watch: ") || $0.hasPrefix("NSGlobalDomain: ") }, "\(later)")
        #expect(await stop(monitor, signal: SIGTERM) == 0)
    }

    @Test("monitor without a domain sees every domain; --json prints a JSON object per line; SIGINT stops it")
    func everyDomainAsJSON() async throws {
        let fixture = try await ServiceFixture()
        let (monitor, output) = try startMonitor(fixture, ["--json"])
        let text = try await writeUntilSeen(fixture, output: output, expected: "\"domain\":\"com.example.Any\"") { attempt in
            expectSuccess(try fixture.prefs("write", "com.example.Any", "When", "-date", "2024-05-01 12:00:0\(attempt % 10) +0000"))
        }
        let line = try #require(text.split(separator: "\n").first)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["domain"] as? String == "com.example.Any")
        // The first line is of whichever write came after the monitor subscribed.
        let when = try #require((object["changed"] as? [String: Any])?["When"] as? String)
        #expect(when.hasPrefix("2024-05-01T12:00:0") && when.hasSuffix("Z") && when.count == 20, "\(when)")
        #expect(await stop(monitor, signal: SIGINT) == 0)
    }

    @Test("monitor without a domain prints a volatile domain's changes too, marked volatile, in text and JSON")
    func volatileDomains() async throws {
        let fixture = try await ServiceFixture()
        let (monitor, output) = try startMonitor(fixture, [])
        // `volatile set` makes a new domain (it refuses a name in use): one per attempt.
        _ = try await writeUntilSeen(fixture, output: output, expected: "(volatile): Token = \"t") { attempt in
            expectSuccess(try fixture.prefs("volatile", "set", "com.example.Session\(attempt)", "{ Token = t\(attempt); }"))
        }
        #expect(await stop(monitor, signal: SIGTERM) == 0)
        let (jsonMonitor, jsonOutput) = try startMonitor(fixture, ["--json"])
        let text = try await writeUntilSeen(fixture, output: jsonOutput, expected: "\"volatile\":true") { attempt in
            expectSuccess(try fixture.prefs("volatile", "set", "com.example.Json\(attempt)", "{ Token = j\(attempt); }"))
        }
        let line = try #require(text.split(separator: "\n").first { $0.contains("\"volatile\":true") })
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect((object["domain"] as? String)?.hasPrefix("com.example.Json") == true, "\(line)")
        #expect(((object["changed"] as? [String: Any])?["Token"] as? String)?.hasPrefix("j") == true, "\(line)")
        #expect(await stop(jsonMonitor, signal: SIGTERM) == 0)
    }

    @Test("monitor prints the values a change left out of its signal (invalidated), re-read from prefsd")
    func invalidatedValues() async throws {
        let fixture = try await ServiceFixture()
        let (monitor, output) = try startMonitor(fixture, ["com.example.Big"])
        // 5,000 bytes: more than a signal's 4 KiB, so prefsd names the key in invalidated.
        let blob = String(repeating: "x", count: 5000)
        let text = try await writeUntilSeen(fixture, output: output, expected: "Blob = \"") { attempt in
            expectSuccess(try fixture.prefs("write", "com.example.Big", "Blob", "-string", blob + String(attempt)))
        }
        let line = try #require(text.split(separator: "\n").first { $0.contains("Blob = \"") })
        #expect(line.hasPrefix("com.example.Big: Blob = \"\(blob)"))
        #expect(await stop(monitor, signal: SIGTERM) == 0)
    }
}

@Suite("prefs exit statuses")
struct ExitCodeTests {
    @Test("not found is 1, usage errors are 2, invalid names are 5, each with one line on stderr")
    func basics() async throws {
        let fixture = try await ServiceFixture()
        let missingDomain = try fixture.prefs("read", "com.example.Missing")
        #expect(missingDomain.status == 1)
        #expect(missingDomain.stderr == "prefs: the domain com.example.Missing does not exist; `prefs domains` lists the domains\n")
        expectSuccess(try fixture.prefs("write", "com.example.Here", "A", "1"))
        let missingKey = try fixture.prefs("read", "com.example.Here", "B")
        #expect(missingKey.status == 1)
        #expect(missingKey.stderr.contains("\"B\""))
        #expect(try fixture.prefs("read-type", "com.example.Here", "B").status == 1)

        for usage in [
            ["frobnicate"], ["read", "a", "b", "c"], ["write", "com.example.Here", "K", "-int", "many"],
            ["write", "com.example.Here"], ["read-type", "com.example.Here"], ["rename", "com.example.Here", "A"],
            ["read", "--no-such-flag"], ["write", "com.example.Here", "K", "-bool", "maybe"], ["volatile", "set", "com.x", "(a)"],
        ] {
            let result = try fixture.run(ServiceFixture.prefsBinary.path, usage)
            #expect(result.status == 2, "\(usage): \(result.stderr)")
            #expect(!result.stderr.isEmpty)
        }
        // An unknown verb is named, with the verbs there are.
        let unknownVerb = try fixture.prefs("frobnicate", "com.example.Here")
        #expect(unknownVerb.status == 2)
        #expect(unknownVerb.stderr.hasPrefix("prefs: 'frobnicate' is not a verb of prefs; the verbs are read, read-type, write,"), "\(unknownVerb.stderr)")
        #expect(unknownVerb.stderr.contains("roaming") && unknownVerb.stderr.filter { $0 == "\n" }.count == 1, "\(unknownVerb.stderr)")
        // Every verb the message names is one prefs takes.
        #expect(try fixture.prefs("help", "roaming").status == 0)
        let badName = try fixture.prefs("write", "bad/name", "K", "v")
        #expect(badName.status == 5)
        #expect(badName.stderr.hasPrefix("prefs: ") && badName.stderr.filter { $0 == "\n" }.count == 1)
        #expect(try fixture.prefs("write", "com.example.Here", "", "v").status == 5)
        #expect(try fixture.prefs("monitor", "bad'name").status == 5)
    }

    @Test("a forced key is 3: writing, deleting and renaming it are refused; is-forced says true")
    func forced() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefs-managed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try PropertyListValue.dictionary(["Proxy": .string("lab-proxy")]).xmlPropertyListData()
            .write(to: directory.appendingPathComponent("com.example.Lab.plist"))
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path, "--allow-unowned-managed-dir"])
        #expect(try fixture.prefs("is-forced", "com.example.Lab", "Proxy").stdout == "true\n")
        #expect(try fixture.prefs("read", "com.example.Lab", "Proxy").stdout == "lab-proxy\n")
        let write = try fixture.prefs("write", "com.example.Lab", "Proxy", "mine")
        #expect(write.status == 3)
        #expect(write.stderr.hasPrefix("prefs: ") && write.stderr.contains("administrator"))
        #expect(try fixture.prefs("delete", "com.example.Lab", "Proxy").status == 3)
        #expect(try fixture.prefs("rename", "com.example.Lab", "Proxy", "Other").status == 3)
        #expect(try fixture.prefs("write", "com.example.Lab", "{ Proxy = x; }").status == 3)
        #expect(try fixture.prefs("read", "com.example.Lab", "Proxy").stdout == "lab-proxy\n")
    }

    @Test("a value over the size limit is 4")
    func quota() async throws {
        let fixture = try await ServiceFixture(arguments: ["--max-value-size", "200"])
        let result = try fixture.prefs("write", "com.example.Big", "K", "-string", String(repeating: "x", count: 1000))
        #expect(result.status == 4)
        #expect(result.stderr.hasPrefix("prefs: ") && result.stderr.filter { $0 == "\n" }.count == 1)
        expectSuccess(try fixture.prefs("write", "com.example.Big", "K", "-string", "small"))
    }

    @Test("no session bus, or a bus where prefsd cannot be started, is 69 with a message saying what to do")
    func unavailable() throws {
        let noBus = try runCommand(ServiceFixture.prefsBinary.path, ["domains"], environment: ["DBUS_SESSION_BUS_ADDRESS": ""])
        #expect(noBus.status == 69)
        #expect(noBus.stderr.contains("DBUS_SESSION_BUS_ADDRESS"))
        let deadBus = try runCommand(ServiceFixture.prefsBinary.path, ["domains"], environment: ["DBUS_SESSION_BUS_ADDRESS": "unix:path=/nonexistent/bus"])
        #expect(deadBus.status == 69)
        // The bus's sentences, then the hint as one more.
        #expect(deadBus.stderr.contains("the address is right. After `make run`, paste the `export` lines"), "\(deadBus.stderr)")
        #expect(!deadBus.stderr.contains(".;"), "\(deadBus.stderr)")

        let bus = try PrivateBus()
        defer { bus.stop() }
        let empty = try runCommand(ServiceFixture.prefsBinary.path, ["read", "com.example.X"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(empty.status == 69)
        #expect(empty.stderr.contains("make install"))
    }

    @Test("a prefsd the bus cannot start is 69 with a message naming where prefsd's log is, in each case")
    func logNamed() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        try Self.activate("/bin/false", on: bus)
        let failed = try runCommand(ServiceFixture.prefsBinary.path, ["read", "com.example.X"], environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
        #expect(failed.status == 69)
        #expect(failed.stderr.contains("the bus could not start prefsd"), "\(failed.stderr)")
        #expect(failed.stderr.contains("`journalctl --user -u prefsd` when systemd started it"), "\(failed.stderr)")
        #expect(failed.stderr.contains("else the standard error of the bus daemon that started it"), "\(failed.stderr)")
    }

    @Test("when prefsd is not running, the bus starts it for prefs (D-Bus activation), its log going to the bus daemon's standard error")
    func activation() throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let store = bus.directory.appendingPathComponent("store")
        try Self.activate(
            "\(ServiceFixture.binary.path) --store \(store.path) \(ServiceFixture.administratorArguments(in: bus.directory).joined(separator: " "))",
            on: bus)
        let environment = ["DBUS_SESSION_BUS_ADDRESS": bus.address]
        let write = try runCommand(ServiceFixture.prefsBinary.path, ["write", "com.example.Started", "K", "-int", "1"], environment: environment)
        #expect(write.status == 0, "\(write.stderr)")
        #expect(try runCommand(ServiceFixture.prefsBinary.path, ["read", "com.example.Started", "K"], environment: environment).stdout == "1\n")
        // prefsd logs that it owns its name before it answers a call; without systemd, the
        // bus it started from has its log, as docs/prefsd.md says.
        let log = try String(contentsOf: bus.logFile, encoding: .utf8)
        #expect(log.contains("owns \(PreferencesBus.busName)"), "the bus daemon's standard error: \(log)")
    }

    /// Makes the command line `exec` what the bus starts for prefsd's name.
    private static func activate(_ exec: String, on bus: PrivateBus) throws {
        try "[D-BUS Service]\nName=\(PreferencesBus.busName)\nExec=\(exec)\n"
            .write(to: bus.serviceDirectory.appendingPathComponent("\(PreferencesBus.busName).service"), atomically: true, encoding: .utf8)
    }
}
