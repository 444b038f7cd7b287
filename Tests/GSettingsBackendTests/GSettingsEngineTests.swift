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
}
