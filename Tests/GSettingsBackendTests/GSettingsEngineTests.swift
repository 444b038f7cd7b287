import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// What the module's engine (``ServiceClient``) promises, seen from the bus: a
/// `dbus-monitor` on the private bus records every call to prefsd's interface, and a
/// sentinel `Read` made after the GSettings program has exited marks the end of the record.
@Suite("GSettings backend: loads once, batches writes", .serialized)
struct GSettingsEngineTests {
    /// Starts a monitor of the calls to prefsd on `service`'s bus; returns it and its output.
    private func monitor(_ fixture: GSettingsFixture, _ service: ServiceFixture) throws -> (Process, URL) {
        try fixture.start(
            "dbus-monitor",
            [
                "--address", service.bus.address, "--profile",
                "type='method_call',interface='io.github.prefsd.Preferences1'",
            ])
    }

    /// The members of the calls the monitor saw, once it saw the sentinel `Read` (at most 30 s).
    private func calls(_ output: URL, after sentinel: () async throws -> Void) async throws -> [String] {
        // The monitor is in force once it prints the NameLost of becoming a monitor.
        try await waitUntil { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("NameLost") }
        try await sentinel()
        var members: [String] = []
        try await waitUntil {
            let lines = ((try? String(contentsOf: output, encoding: .utf8)) ?? "").split(separator: "\n")
            members = lines.filter { $0.hasPrefix("mc\t") }.compactMap { $0.split(separator: "\t").last.map(String.init) }
            return members.last == "Read"
        }
        return members.dropLast()
    }

    private func waitUntil(_ condition: () -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(30)
        while !condition() {
            guard ContinuousClock.now < deadline else { throw FixtureError("the monitor did not see what was awaited within 30 s") }
            try await Task.sleep(for: .milliseconds(20))
        }
    }

    @Test("a program that starts prefsd by bus activation loads its domain once (not again when prefsd's name appears)")
    func activationLoadsOnce() async throws {
        let service = try ServiceFixture(activatable: ())
        let fixture = try GSettingsFixture(service: service)
        let (monitor, output) = try monitor(fixture, service)
        defer {
            kill(monitor.processIdentifier, SIGKILL)
            _ = waitForExit(of: monitor)
        }
        try await waitUntil { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("NameLost") }
        let read = try fixture.python(
            """
            s = Gio.Settings.new('org.example.Test')
            print(s.get_string('text'))
            loop = GLib.MainLoop()
            GLib.timeout_add(300, loop.quit)
            loop.run()
            print(s.get_int('int32'))
            """)
        #expect(read.status == 0 && read.stdout == "hello\n5\n", "\(read.stdout) \(read.stderr)")
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        let members = try await calls(output) { _ = try? await proxy.readIfPresent("sentinel.end", "k") }
        #expect(members.filter { $0 == "ReadDomain" }.count == 1, "calls: \(members)")
        #expect(members.filter { $0 == "ForcedKeys" }.count == 1, "calls: \(members)")
    }

    @Test("a burst of GSettings writes reaches prefsd in two Apply calls: the first, then the rest merged")
    func burstIsBatched() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let (monitor, output) = try monitor(fixture, service)
        defer {
            kill(monitor.processIdentifier, SIGKILL)
            _ = waitForExit(of: monitor)
        }
        try await waitUntil { ((try? String(contentsOf: output, encoding: .utf8)) ?? "").contains("NameLost") }
        let written = try fixture.python(
            """
            s = Gio.Settings.new('org.example.Test')
            s.get_string('text')
            for i in range(8):
                s.set_int('int32', i)
            s.set_string('text', 'last')
            s.set_boolean('flag', True)
            s.set_strv('strings', ['x', 'y'])
            Gio.Settings.sync()
            """)
        #expect(written.status == 0, "\(written.stderr)")
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        let members = try await calls(output) { _ = try? await proxy.readIfPresent("sentinel.end", "k") }
        let writes = members.filter { $0 == "Apply" || $0 == "Write" || $0 == "Remove" }
        // 11 writes; the first goes out alone and the ten made while it is in flight merge.
        // A slow machine may let one more go alone, never one call per write.
        #expect(writes.count >= 1 && writes.count <= 3, "calls: \(members)")
        #expect(try await proxy.read("org.example.Test", "int32") == .integer(7))
        #expect(try await proxy.read("org.example.Test", "text") == .string("last"))
        #expect(try await proxy.read("org.example.Test", "strings") == .array([.string("x"), .string("y")]))
    }

    @Test("a read from a snapshot leaves the bus alone until the program's main loop runs, and the loop then loads the domain")
    func snapshotReadWaitsForTheMainLoop() async throws {
        let service = try await ServiceFixture()
        let fixture = try GSettingsFixture(service: service)
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        try await proxy.write("org.example.Test", "text", .string("stored"))
        // The first read loads the domain over the bus; prefsd then writes its snapshot.
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "text").stdout == "'stored'\n")
        let snapshots = service.runtimeDirectory.appendingPathComponent("prefsd")
        #expect(
            await eventually(timeout: .seconds(30)) {
                let buses = (try? FileManager.default.contentsOfDirectory(atPath: snapshots.path)) ?? []
                return buses.contains {
                    FileManager.default.fileExists(atPath: snapshots.appendingPathComponent($0).appendingPathComponent("org.example.Test").path)
                }
            }, "prefsd wrote no snapshot under \(snapshots.path)")

        let (monitor, output) = try monitor(fixture, service)
        defer {
            kill(monitor.processIdentifier, SIGKILL)
            _ = waitForExit(of: monitor)
        }
        // A short program reads from the snapshot and exits: no load goes out.
        #expect(try fixture.gsettings("get", GSettingsFixture.schema, "text").stdout == "'stored'\n")
        let first = try await calls(output) { _ = try? await proxy.readIfPresent("sentinel.first", "k") }
        #expect(first.isEmpty, "calls: \(first)")
        // A program whose main loop runs loads the domain then, once: after a call it makes
        // itself on its session connection between its read and its loop.
        let looped = try fixture.python(
            """
            s = Gio.Settings.new('org.example.Test')
            print(s.get_string('text'))
            bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            try:
                bus.call_sync('io.github.prefsd.Preferences1', '/io/github/prefsd/Preferences1',
                    'io.github.prefsd.Preferences1', 'Read', GLib.Variant('(ss)', ('sentinel.between', 'k')),
                    None, Gio.DBusCallFlags.NONE, 5000, None)
            except GLib.Error:
                pass
            loop = GLib.MainLoop()
            GLib.timeout_add(300, loop.quit)
            loop.run()
            print(s.get_string('text'))
            """)
        #expect(looped.status == 0 && looped.stdout == "stored\nstored\n", "\(looped.stdout) \(looped.stderr)")
        let all = try await calls(output) { _ = try? await proxy.readIfPresent("sentinel.second", "k") }
        // What came after the first sentinel: the program's own Read, then its load.
        let second = Array(all.drop { $0 != "Read" }.dropFirst())
        #expect(second.filter { $0 == "ReadDomain" }.count == 1, "calls: \(all)")
        #expect(second.filter { $0 == "ForcedKeys" }.count == 1, "calls: \(all)")
        let between = second.firstIndex(of: "Read"), load = second.firstIndex(of: "ReadDomain")
        #expect((between ?? .max) < (load ?? -1), "the program's load went out before its own Read: \(all)")
    }
}
