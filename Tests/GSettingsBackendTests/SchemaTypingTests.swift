import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// The installed schemas held by the service (contract, "Schemas"): prefsd serving dconf's
/// name, its own schema directory holding the test schemas (compiled by
/// `glib-compile-schemas` while it runs), and GSettings on its stock dconf backend reading
/// what it serves.
@Suite("The schemas on the service's paths", .serialized)
struct SchemaTypingTests {
    /// A schema of its own for the probe that tells when prefsd has read the schemas.
    static let probeXML = """
        <schemalist>
          <schema id="org.example.Probe" path="/org/example/Probe/">
            <key name="number" type="i"><default>0</default></key>
          </schema>
        </schemalist>
        """

    /// prefsd's own schema directory (its `$XDG_DATA_HOME/glib-2.0/schemas`, which the
    /// service fixture makes the test's own).
    static func schemaDirectory(of service: ServiceFixture) -> URL {
        service.bus.directory.appendingPathComponent("data/glib-2.0/schemas", isDirectory: true)
    }

    /// Compiles the test schemas into prefsd's schema directory, while it runs.
    static func install(for service: ServiceFixture) throws {
        let directory = schemaDirectory(of: service)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try GSettingsFixture.schemaXML.write(to: directory.appendingPathComponent("org.example.Test.gschema.xml"), atomically: true, encoding: .utf8)
        try probeXML.write(to: directory.appendingPathComponent("org.example.Probe.gschema.xml"), atomically: true, encoding: .utf8)
        let compiled = try runCommand("glib-compile-schemas", [directory.path])
        guard compiled.status == 0 else { throw FixtureError("glib-compile-schemas failed: \(compiled.stderr)") }
    }

    /// Waits until prefsd refuses a string for the probe's `i` key (`held`) or takes it.
    static func waitUntilSchemas(held: Bool, _ run: (String, [String]) throws -> (status: Int32, stdout: String, stderr: String)) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while ContinuousClock.now < deadline {
            let probe = try run("prefs", ["write", "org.example.Probe", "number", "-string", "probe"])
            if (probe.status != 0) == held {
                if held {
                    #expect(probe.stderr.contains("cannot hold"), "\(probe.stderr)")
                    // The probes taken before leave no stored value behind.
                    _ = try run("prefs", ["delete", "org.example.Probe", "number"])
                }
                return
            }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw FixtureError("prefsd did not \(held ? "read" : "let go of") the schemas within 30 s")
    }

    /// prefsd serving dconf, holding values to the test schemas.
    static func served() async throws -> DconfServedTests.Served {
        let served = try await DconfServedTests.Served()
        try install(for: served.service)
        try await waitUntilSchemas(held: true, served.run)
        return served
    }

    /// Whether `gsettings get org.example.Test KEY` on dconf's module prints `text` within
    /// 30 s: a change through prefsd's own interface reaches dconf's file off its answer.
    static func gsettings(_ served: DconfServedTests.Served, _ key: String, reads text: String) async throws -> Bool {
        let deadline = ContinuousClock.now + .seconds(30)
        while true {
            let got = try served.run("gsettings", ["get", "org.example.Test", key]).stdout
            if got == text + "\n" { return true }
            guard ContinuousClock.now < deadline else {
                Issue.record("gsettings get org.example.Test \(key) printed \(got), not \(text)")
                return false
            }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("prefsd's own writes are stored with the schema's type: GSettings on dconf reads them, prefs reads the contract's mapping")
    func typedAsTheSchemaSays() async throws {
        let served = try await Self.served()
        #expect(try served.run("prefs", ["write", "org.example.Test", "uint32", "-int", "600"]).status == 0)
        #expect(try await Self.gsettings(served, "uint32", reads: "uint32 600"))
        #expect(try served.run("dconf", ["read", "/org/example/Test/uint32"]).stdout == "uint32 600\n")
        #expect(try served.run("prefs", ["read", "org.example.Test", "uint32"]).stdout == "600\n")

        #expect(try served.run("prefs", ["write", "org.example.Test", "int16", "-int", "-7"]).status == 0)
        #expect(try await Self.gsettings(served, "int16", reads: "int16 -7"))
        let array = try served.run("prefs", ["write", "org.example.Test", "strings", "-array", "a", "b"])
        #expect(array.status == 0, "\(array.stderr)")
        #expect(try await Self.gsettings(served, "strings", reads: "['a', 'b']"))
        #expect(try served.run("prefs", ["write", "org.example.Test", "color", "-string", "green"]).status == 0)
        #expect(try await Self.gsettings(served, "color", reads: "'green'"))
    }

    @Test("a value the key cannot hold is refused with InvalidValue naming key, schema and type; the whole batch; nothing changes")
    func refused() async throws {
        let served = try await Self.served()
        #expect(try served.run("prefs", ["write", "org.example.Test", "int32", "-int", "12"]).status == 0)
        let address = served.service.bus.address
        let call = try served.run(
            "busctl",
            [
                "--address=\(address)", "call", "io.github.prefsd.Preferences1", "/io/github/prefsd/Preferences1", "io.github.prefsd.Preferences1",
                "Write", "ssv", "org.example.Test", "int32", "s", "big",
            ])
        #expect(call.status != 0)
        #expect(call.stderr.contains("cannot hold \"big\""), "\(call.stderr)")
        #expect(call.stderr.contains("org.example.Test \"int32\"") && call.stderr.contains("type i (an int32)"), "\(call.stderr)")
        let sent = try served.run(
            "dbus-send",
            [
                "--session", "--print-reply", "--dest=io.github.prefsd.Preferences1", "/io/github/prefsd/Preferences1",
                "io.github.prefsd.Preferences1.Write", "string:org.example.Test", "string:uint32", "variant:int64:-1",
            ])
        #expect(sent.status != 0)
        #expect(sent.stderr.contains("io.github.prefsd.Preferences1.Error.InvalidValue"), "\(sent.stderr)")
        // Out of the choices; a batch with one good value and one bad changes nothing.
        let color = try served.run("prefs", ["write", "org.example.Test", "color", "-string", "purple"])
        #expect(color.status != 0 && color.stderr.contains("one of red, green"), "\(color.stderr)")
        let batch = try served.run(
            "gdbus",
            [
                "call", "--address", address, "-d", "io.github.prefsd.Preferences1", "-o", "/io/github/prefsd/Preferences1", "-m",
                "io.github.prefsd.Preferences1.Apply", "org.example.Test", "{'text': <'fine'>, 'flag': <'yes'>}", "[]",
            ])
        #expect(batch.status != 0 && batch.stderr.contains("org.example.Test \"flag\""), "\(batch.stderr)")
        #expect(try served.run("prefs", ["read", "org.example.Test", "int32"]).stdout == "12\n")
        #expect(try served.run("prefs", ["read", "org.example.Test", "text"]).status != 0)
        // Keys no schema describes take anything, as under dconf.
        #expect(try served.run("prefs", ["write", "org.example.Test", "private", "-string", "big"]).status == 0)
        #expect(try served.run("dconf", ["write", "/org/example/Test/other", "int32 5"]).status == 0)
        #expect(try served.run("prefs", ["write", "com.example.Editor", "FontSize", "-string", "big"]).status == 0)
    }

    @Test("dconf write of another type than the schema's exits non-zero naming the key; a load names every offending key")
    func dconfTypes() async throws {
        let served = try await Self.served()
        #expect(try served.run("dconf", ["write", "/org/example/Test/uint32", "uint32 60"]).status == 0)
        let wrong = try served.run("dconf", ["write", "/org/example/Test/uint32", "int32 70"])
        #expect(wrong.status != 0)
        #expect(wrong.stderr.contains("/org/example/Test/uint32 cannot hold 70 (an int32)"), "\(wrong.stderr)")
        #expect(wrong.stderr.contains("uint32 70 would do"), "\(wrong.stderr)")
        #expect(try served.run("dconf", ["read", "/org/example/Test/uint32"]).stdout == "uint32 60\n")
        let load = try served.run("/bin/sh", ["-c", "printf '[/]\\nint32=int64 3\\nint16=7\\ntext=\\047fine\\047\\n' | dconf load /org/example/Test/"])
        #expect(load.status != 0)
        #expect(
            load.stderr.contains("/org/example/Test/int32 cannot hold int64 3 (an int64)")
                && load.stderr.contains("/org/example/Test/int16 cannot hold 7 (an int32)"), "\(load.stderr)")
        #expect(try served.run("prefs", ["read", "org.example.Test", "text"]).status != 0)
    }

    @Test("undoing a dconf reset puts the value back with the schema's type")
    func undoKeepsType() async throws {
        let served = try await Self.served()
        #expect(try served.run("prefs", ["write", "org.example.Test", "uint32", "-int", "120"]).status == 0)
        #expect(try served.run("dconf", ["reset", "/org/example/Test/uint32"]).status == 0)
        #expect(try await Self.gsettings(served, "uint32", reads: "uint32 9"))
        #expect(try served.run("prefs", ["undo", "org.example.Test", "uint32"]).status == 0)
        #expect(try await Self.gsettings(served, "uint32", reads: "uint32 120"))
        #expect(try served.run("prefs", ["read", "org.example.Test", "uint32"]).stdout == "120\n")
    }

    @Test("prefs dconf-check --store lists stored values GSettings would not read, with how to mend them")
    func storeCheck() async throws {
        let served = try await DconfServedTests.Served()
        // Stored before prefsd held values to the schemas, as an older prefsd stored them.
        for (key, type, value) in [("int32", "-string", "big"), ("uint32", "-int", "600"), ("text", "-string", "fine")] {
            #expect(try served.run("prefs", ["write", "org.example.Test", key, type, value]).status == 0)
        }
        try Self.install(for: served.service)
        try await Self.waitUntilSchemas(held: true, served.run)
        #expect(try served.run("prefs", ["read", "org.example.Test", "int32"]).stdout == "big\n")
        let check = try served.run("prefs", ["dconf-check", "--store"])
        #expect(check.status == 1)
        #expect(check.stdout.contains("org.example.Test \"int32\" cannot hold \"big\""), "\(check.stdout)")
        #expect(check.stdout.contains("dconf's file gives it as int64 600"), "\(check.stdout)")
        #expect(check.stdout.contains("`dconf write /org/example/Test/uint32 'uint32 600'`"), "\(check.stdout)")
        #expect(check.stdout.contains("GSettings would not read 2 of 3 stored values of schema keys"), "\(check.stdout)")
        // What it says mends them.
        #expect(try served.run("dconf", ["write", "/org/example/Test/uint32", "uint32 600"]).status == 0)
        #expect(try served.run("prefs", ["delete", "org.example.Test", "int32"]).status == 0)
        let clean = try served.run("prefs", ["dconf-check", "--store"])
        #expect(clean.status == 0 && clean.stdout == "GSettings reads every one of 2 stored values of schema keys\n", "\(clean)")
        #expect(try await Self.gsettings(served, "uint32", reads: "uint32 600"))
    }

    @Test("schemas installed and removed while prefsd runs are seen")
    func seenLive() async throws {
        let service = try await ServiceFixture()
        let run = { (tool: String, arguments: [String]) in try service.prefsResult(tool, arguments) }
        try await Self.waitUntilSchemas(held: false, run)
        try Self.install(for: service)
        try await Self.waitUntilSchemas(held: true, run)
        try FileManager.default.removeItem(at: Self.schemaDirectory(of: service))
        try await Self.waitUntilSchemas(held: false, run)
    }
}

extension ServiceFixture {
    /// Runs the built `prefs` on the fixture's bus (the tool is always `prefs`).
    fileprivate func prefsResult(_ tool: String, _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand(ServiceFixture.prefsBinary.path, arguments, environment: ["DBUS_SESSION_BUS_ADDRESS": bus.address])
    }
}
