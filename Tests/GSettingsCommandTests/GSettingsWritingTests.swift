import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// `prefs gsettings set`, `reset` and `reset-recursively` write where GSettings programs
/// read, as they would store it themselves: on prefsd's module, and on dconf's backend
/// when prefsd serves dconf; and nowhere, with the reason, when no GSettings program would
/// read it. `monitor` prints what `gsettings monitor` prints.
@Suite("prefs gsettings writes where GSettings reads", .serialized)
struct GSettingsWritingTests {
    @Test("set and reset round trip with gsettings on prefsd's module; the values are stored as the module stores them")
    func roundTrip() async throws {
        let fixture = try await GSettingsCommandFixture()
        let cases: [(key: String, value: String, printed: String)] = [
            ("text", "hello there", "'hello there'"), ("int32", "-12", "-12"), ("uint32", "600", "uint32 600"),
            ("real", "-0.5", "-0.5"), ("strings", "['a', 'b']", "['a', 'b']"), ("pair", "(3, -4)", "(3, -4)"),
            ("maybe", "just 'm'", "@ms 'm'"), ("color", "green", "'green'"), ("days", "['tue', 'wed']", "['tue', 'wed']"),
            ("any", "<uint32 5>", "<uint32 5>"), ("names", "{'b': 'x', 'a': 'y'}", "{'b': 'x', 'a': 'y'}"),
        ]
        for item in cases {
            let set = try fixture.prefsGSettings("set", "org.example.Test", item.key, item.value)
            #expect(set.status == 0, "prefs gsettings set \(item.key): \(set.stderr)")
            #expect(set.stdout.isEmpty && set.stderr.isEmpty)
            let read = try fixture.gsettings("get", "org.example.Test", item.key).stdout
            #expect(read == item.printed + "\n", "\(item.key)")
        }
        // What gsettings stores through the module, and what prefs gsettings stores: the same.
        let proxy = try PreferencesProxy.connect(address: fixture.service.bus.address)
        defer { proxy.close() }
        let ours = try await proxy.readDomain("org.example.Test")
        for item in cases {
            #expect(try fixture.gsettings("set", "org.example.Test", item.key, item.value).status == 0)
        }
        let theirs = try await proxy.readDomain("org.example.Test")
        #expect(theirs == ours)
        // And back: gsettings writes, prefs gsettings reads.
        #expect(try fixture.gsettings("set", "org.example.Test", "uint32", "7").status == 0)
        #expect(try fixture.prefsGSettings("get", "org.example.Test", "uint32").stdout == "uint32 7\n")
        // reset and reset-recursively remove the keys: the defaults come back, for children too.
        #expect(try fixture.prefsGSettings("set", "org.example.Test.window", "width", "800").status == 0)
        #expect(try fixture.prefsGSettings("set", "org.example.Profile:/org/example/Test/profile/", "font", "Sans 9").status == 0)
        #expect(try fixture.prefsGSettings("reset", "org.example.Test", "text").status == 0)
        #expect(try fixture.gsettings("get", "org.example.Test", "text").stdout == "'hello'\n")
        let recursive = try fixture.prefsGSettings("reset-recursively", "org.example.Test")
        #expect(recursive.status == 0, "\(recursive.stderr)")
        #expect(recursive.stderr.isEmpty)
        let defaults = try fixture.gsettings("list-recursively", "org.example.Test", environment: ["GSETTINGS_BACKEND": "memory"]).stdout
        let listed = try fixture.gsettings("list-recursively", "org.example.Test").stdout
        #expect(listed == defaults)
        let left = try? await proxy.readDomain("org.example.Test")
        #expect(left == nil)
    }

    @Test("set and reset are in prefsd's history, made by prefs")
    func history() async throws {
        let fixture = try await GSettingsCommandFixture()
        #expect(try fixture.prefsGSettings("set", "org.gnome.desktop.session", "idle-delay", "900").status == 0)
        #expect(try fixture.prefsGSettings("reset", "org.gnome.desktop.session", "idle-delay").status == 0)
        let proxy = try PreferencesProxy.connect(address: fixture.service.bus.address)
        defer { proxy.close() }
        let entries = try await proxy.history("org.gnome.desktop", key: "session/idle-delay")
        #expect(entries.map(\.who) == ["prefs", "prefs"])
        let values: [PropertyListValue?] = entries.map(\.value)
        #expect(values == [.integer(900), nil])
    }

    @Test("a key an administrator forces: set and reset refuse with gsettings' message and the reason, writable says false")
    func forcedKey() async throws {
        let managed = try ServiceFixture.managedDirectory(["org.example.Test": ["text": .string("by the administrator")]])
        defer { try? FileManager.default.removeItem(at: managed) }
        let fixture = try await GSettingsCommandFixture(prefsdArguments: ["--managed-dir", managed.path, "--allow-unowned-managed-dir"])
        let refusedLines: [[String]] = [["set", "org.example.Test", "text", "mine"], ["reset", "org.example.Test", "text"]]
        for arguments in refusedLines {
            let refused = try fixture.prefs(["gsettings"] + arguments)
            #expect(refused.status == 1)
            #expect(refused.stderr.hasPrefix("The key is not writable\n"), "\(refused.stderr)")
            #expect(refused.stderr.contains("an administrator forces /org/example/Test/text"), "\(refused.stderr)")
        }
        #expect(try fixture.prefsGSettings("get", "org.example.Test", "text").stdout == "'by the administrator'\n")
        #expect(try fixture.prefsGSettings("writable", "org.example.Test", "text").stdout == "false\n")
        #expect(try fixture.prefsGSettings("writable", "org.example.Test", "flag").stdout == "true\n")
        let compared: [[String]] = [["writable", "org.example.Test", "text"], ["get", "org.example.Test", "text"]]
        let (ran, differences) = try fixture.compare(compared)
        #expect(ran == 2)
        #expect(differences.isEmpty, "\(differences)")
        // reset-recursively leaves the forced key alone and says so; the others are reset.
        #expect(try fixture.prefsGSettings("set", "org.example.Test", "flag", "true").status == 0)
        let recursive = try fixture.prefsGSettings("reset-recursively", "org.example.Test")
        #expect(recursive.status == 0)
        #expect(recursive.stderr.contains("forced by an administrator: /org/example/Test/text"), "\(recursive.stderr)")
        #expect(try fixture.gsettings("get", "org.example.Test", "flag").stdout == "false\n")
    }

    @Test("where GSettings programs read dconf-service's database (or another backend), set and reset refuse and change nothing")
    func nobodyReads() async throws {
        let fixture = try await GSettingsCommandFixture()
        #expect(try fixture.prefsGSettings("set", "org.example.Test", "int32", "1").status == 0)
        // Debian's dconf-service, started by the bus, serves dconf's name.
        let run = fixture.directory.appendingPathComponent("dconf-run")
        try FileManager.default.createDirectory(at: run, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let serviceFile = """
            [D-BUS Service]
            Name=ca.desrt.dconf
            Exec=/usr/bin/env XDG_CONFIG_HOME=\(fixture.directory.path)/config XDG_RUNTIME_DIR=\(run.path) /usr/libexec/dconf-service
            """
        try serviceFile.write(to: fixture.service.bus.serviceDirectory.appendingPathComponent("ca.desrt.dconf.service"), atomically: true, encoding: .utf8)
        let start: [String] = [
            "--session", "--print-reply", "--dest=org.freedesktop.DBus", "/org/freedesktop/DBus",
            "org.freedesktop.DBus.StartServiceByName", "string:ca.desrt.dconf", "uint32:0",
        ]
        let started = try runCommand("dbus-send", start, environment: fixture.environment)
        #expect(started.status == 0, "dconf-service did not start: \(started.stderr)")
        defer {
            if let pid = PrivateBus.processID(owning: "ca.desrt.dconf", onBusAt: fixture.service.bus.address) { kill(pid, SIGKILL) }
        }
        let dconfSession: [String: String] = ["GSETTINGS_BACKEND": ""]
        let writes: [[String]] = [
            ["set", "org.example.Test", "int32", "2"], ["reset", "org.example.Test", "int32"], ["reset-recursively", "org.example.Test"],
        ]
        for arguments in writes {
            let refused = try fixture.prefs(["gsettings"] + arguments, environment: dconfSession)
            #expect(refused.status == 1)
            #expect(refused.stderr.contains("dconf-service"), "\(refused.stderr)")
            #expect(refused.stderr.contains("serves ca.desrt.dconf"), "\(refused.stderr)")
        }
        #expect(try fixture.prefsGSettings("writable", "org.example.Test", "int32", environment: dconfSession).stdout == "false\n")
        let memory = try fixture.prefs(["gsettings", "set", "org.example.Test", "int32", "3"], environment: ["GSETTINGS_BACKEND": "memory"])
        #expect(memory.status == 1)
        #expect(memory.stderr.contains("GSETTINGS_BACKEND=memory"), "\(memory.stderr)")
        // Nothing changed; reading still answers from prefsd.
        #expect(try fixture.prefsGSettings("get", "org.example.Test", "int32", environment: dconfSession).stdout == "1\n")
    }

    @Test("with prefsd serving dconf, set keeps the schema's type in dconf's database: dconf and GSettings on dconf read it")
    func servedDconf() async throws {
        let fixture = try await GSettingsCommandFixture(prefsdArguments: ["--dconf"])
        let modules = fixture.directory.appendingPathComponent("dconf-module")
        try DconfGIOModule.link(into: modules)
        let profile = fixture.directory.appendingPathComponent("dconf-profile")
        try "user-db:user\n".write(to: profile, atomically: true, encoding: .utf8)
        // dconf's clients read prefsd's file: its XDG_CONFIG_HOME and runtime directory.
        let dconf: [String: String] = [
            "GSETTINGS_BACKEND": "dconf", "GIO_MODULE_DIR": modules.path, "GIO_EXTRA_MODULES": "", "DCONF_PROFILE": profile.path,
            "XDG_CONFIG_HOME": fixture.service.bus.directory.appendingPathComponent("config").path,
        ]
        let dconfSession: [String: String] = ["GSETTINGS_BACKEND": "dconf"]
        let cases: [(schema: String, key: String, value: String, path: String, read: String)] = [
            ("org.gnome.desktop.session", "idle-delay", "600", "/org/gnome/desktop/session/idle-delay", "uint32 600"),
            ("org.gnome.desktop.interface", "cursor-size", "48", "/org/gnome/desktop/interface/cursor-size", "48"),
            ("org.example.Test", "strings", "['a']", "/org/example/Test/strings", "['a']"),
            ("org.example.Test", "pair", "(1, 2)", "/org/example/Test/pair", "(1, 2)"),
            ("org.example.Test", "uint16", "9", "/org/example/Test/uint16", "uint16 9"),
        ]
        for item in cases {
            let set = try fixture.prefsGSettings("set", item.schema, item.key, item.value, environment: dconfSession)
            #expect(set.status == 0, "\(item.key): \(set.stderr)")
            let read = try runCommand("dconf", ["read", item.path], environment: fixture.environment.merging(dconf) { $1 })
            #expect(read.stdout == item.read + "\n", "\(item.path)")
            let got = try fixture.gsettings("get", item.schema, item.key, environment: dconf)
            #expect(got.stdout == item.read + "\n", "\(item.key)")
        }
        #expect(try fixture.prefsGSettings("reset", "org.gnome.desktop.session", "idle-delay", environment: dconfSession).status == 0)
        #expect(try fixture.gsettings("get", "org.gnome.desktop.session", "idle-delay", environment: dconf).stdout == "uint32 300\n")
        let proxy = try PreferencesProxy.connect(address: fixture.service.bus.address)
        defer { proxy.close() }
        let who = try await proxy.history("org.gnome.desktop", key: "session/idle-delay").map(\.who)
        #expect(who == ["prefs", "prefs"])
    }

    @Test("monitor prints each change as gsettings monitor prints it, for a schema and for one key")
    func monitor() async throws {
        let fixture = try await GSettingsCommandFixture()
        let prefs = ServiceFixture.prefsBinary.path
        let watchers: [(Process, URL)] = [
            try fixture.start("gsettings", ["monitor", "org.example.Test"]),
            try fixture.start(prefs, ["gsettings", "monitor", "org.example.Test"]),
            try fixture.start("gsettings", ["monitor", "org.example.Test", "text"]),
            try fixture.start(prefs, ["gsettings", "monitor", "org.example.Test", "text"]),
        ]
        defer {
            for (process, _) in watchers where process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }
        // Each watcher has subscribed once it has seen a change of the key it follows.
        let outputs: [URL] = watchers.map(\.1)
        var round = 0
        while outputs.contains(where: { output in !Self.contents(output).contains("text: 'ready") }) {
            round += 1
            guard round < 600 else {
                Issue.record("the monitors never saw a change")
                return
            }
            #expect(try fixture.prefsGSettings("set", "org.example.Test", "text", "ready \(round)").status == 0)
            try await Task.sleep(for: .milliseconds(50))
        }
        let mark = "text: 'ready \(round)'\n"
        #expect(try fixture.prefsGSettings("set", "org.example.Test", "text", "first").status == 0)
        #expect(try fixture.gsettings("set", "org.example.Test", "uint32", "77").status == 0)
        #expect(try fixture.prefsGSettings("reset", "org.example.Test", "text").status == 0)
        #expect(try fixture.prefsGSettings("set", "org.example.Test", "days", "['tue']").status == 0)
        #expect(try fixture.prefs(["write", "org.example.Test", "uint16", "-int", "-1"]).status == 0)
        #expect(try fixture.prefsGSettings("set", "org.example.Test", "text", "last").status == 0)
        #expect(try fixture.prefsGSettings("set", "org.example.Test", "int32", "99").status == 0)
        for output in outputs { try await waitFor("text: 'last'", in: output) }
        for output in outputs.prefix(2) { try await waitFor("int32: 99", in: output) }
        let tails: [String] = outputs.map { output in
            let text = Self.contents(output)
            guard let start = text.range(of: mark) else { return text }
            return String(text[start.upperBound...])
        }
        let schemaLines = "text: 'first'\nuint32: uint32 77\ntext: 'hello'\ndays: ['tue']\nuint16: uint16 8\ntext: 'last'\nint32: 99\n"
        let keyLines = "text: 'first'\ntext: 'hello'\ntext: 'last'\n"
        #expect(tails == [schemaLines, schemaLines, keyLines, keyLines])
    }

    /// What a background program has printed so far.
    private static func contents(_ file: URL) -> String {
        (try? String(contentsOf: file, encoding: .utf8)) ?? ""
    }
}

/// Waits until `text` appears in `file` (a background program's output), at most `timeout`.
func waitFor(_ text: String, in file: URL, timeout: Duration = .seconds(30)) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if let output = try? String(contentsOf: file, encoding: .utf8), output.contains(text) { return }
        try await Task.sleep(for: .milliseconds(50))
    }
    throw FixtureError("\"\(text)\" did not appear within \(timeout); the output was:\n\((try? String(contentsOf: file, encoding: .utf8)) ?? "")")
}
