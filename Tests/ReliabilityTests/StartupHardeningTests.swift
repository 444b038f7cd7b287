import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// Flags at their extremes and a hand-over that arrives too early.
    @Suite("Start-up edges")
    struct StartupEdges {
        @Test("--max-nesting at Int.max: dictionaries are still read, prefsd does not trap")
        func hugeNestingFlag() async throws {
            let fixture = try await ServiceFixture(arguments: ["--max-nesting", "\(Int.max)"])
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            let domain = DBusValue.string("com.example.Nesting")
            #expect(await client.refusal("ReplaceDomain", [domain, ServiceClient.values(["k": .integer(1)])]) == nil)
            #expect(await client.refusal("Apply", [domain, ServiceClient.values(["j": .array([.integer(2)])]), .stringArray([])]) == nil)
            #expect(await client.refusal("SetVolatileDomain", [.string("com.example.NestingVolatile"), ServiceClient.values(["v": .integer(3)])]) == nil)
            // The bus's own bound still holds: 31 nested arrays cannot be sent back, so they are refused.
            let deep = (0..<31).reduce(PropertyListValue.integer(1)) { inner, _ in .array([inner]) }
            #expect(await client.refusal("Write", [domain, .string("deep"), deep.dbusVariant]) == PreferencesErrorName.invalidValue.busName)
            try await fixture.ping(client.connection)
            #expect(fixture.isRunning)
            #expect(try await client.readDomain("com.example.Nesting") == ["k": .integer(1), "j": .array([.integer(2)])])
        }

        @Test("--replace while the old prefsd is still starting: the old one exits once started, the new one serves")
        func replaceWhileStarting() async throws {
            let fixture = try await ServiceFixture()
            #expect(fixture.stopService() == 0)
            // Hold the store lock, so the next prefsd owns the bus name but cannot load yet.
            let lockPath = fixture.storeDirectory.appendingPathComponent("lock").path
            let holder = open(lockPath, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
            #expect(holder >= 0 && flock(holder, LOCK_EX) == 0)
            var held = true
            defer { if held { close(holder) } }

            try await fixture.startService()  // owns the name, waits for the lock
            guard let old = fixture.pid else { throw FixtureError("no prefsd") }
            let successor = Process()
            successor.environment = helperEnvironment
            successor.executableURL = ServiceFixture.binary
            successor.arguments =
                ["--address", fixture.bus.address, "--store", fixture.storeDirectory.path, "--replace", "--log-level", "warning"]
                + fixture.administratorArguments
            try successor.run()
            defer { stop(successor, signal: SIGKILL) }
            // The successor takes the name (the old one gets NameLost while starting); stop
            // it there, so the old one is the one that gets the lock.
            let watcher = ServiceClient(connection: try fixture.connect())
            defer { watcher.connection.close() }
            let deadline = ContinuousClock.now + .seconds(20)
            var owner = ""
            while ContinuousClock.now < deadline {
                let reply = try? await watcher.connection.call(
                    .methodCall(
                        destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
                        member: "GetConnectionUnixProcessID", body: [.string(PreferencesBus.busName)]))
                if case .uint32(let pid)? = reply?.body.first, Int32(pid) == successor.processIdentifier { owner = "successor"; break }
                try await Task.sleep(for: .milliseconds(20))
            }
            #expect(owner == "successor", "the successor never owned the name")
            kill(successor.processIdentifier, SIGSTOP)
            close(holder)
            held = false

            // The old prefsd gets the lock, finishes starting, and exits because it was replaced.
            #expect(await fixture.waitForExit(timeout: .seconds(8)) == 0, "the replaced prefsd did not exit (pid \(old)); log: \(fixture.log.suffix(2000))")
            kill(successor.processIdentifier, SIGCONT)
            // The successor gets the store and serves once the old one left (30 s bounds a stalled machine).
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            var served = false
            let serveDeadline = ContinuousClock.now + .seconds(30)
            while !served, ContinuousClock.now < serveDeadline {
                served = (try? await client.call("Domains")) != nil
                if !served { try await Task.sleep(for: .milliseconds(20)) }
            }
            #expect(served, "the successor does not serve; log: \(fixture.log.suffix(2000))")
            #expect(successor.isRunning, "the successor exited with \(successor.terminationStatus)")
            try await client.write("com.example.Replace", "k", .integer(1))
            #expect(stop(successor) == 0)
        }
    }
}
