import BusTestSupport
import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Synchronization
import Testing

@Suite("Restarts, crashes and a second instance")
struct LifecycleTests {
    @Test("a restart keeps persistent domains and drops volatile ones")
    func restart() async throws {
        let fixture = try await ServiceFixture()
        var client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.App", "kept", .array([.string("a"), .integer(2)]))
        try await client.call("SetVolatileDomain", [.string("com.example.Session"), ServiceClient.values(["k": .integer(1)])])
        #expect(fixture.stopService() == 0, "SIGTERM ends prefsd cleanly")

        try await fixture.startService()
        client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.readValue("com.example.App", "kept") == .array([.string("a"), .integer(2)]))
        #expect(try await client.volatileDomains() == [])
        #expect(await client.refusal("Read", [.string("com.example.Session"), .string("k")]) == PreferencesErrorName.notFound.busName)
    }

    @Test("the store directory is 0700 and its files 0600")
    func permissions() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.App", "k", .integer(1))
        let manager = FileManager.default
        let directoryMode = try manager.attributesOfItem(atPath: fixture.storeDirectory.path)[.posixPermissions] as? Int
        #expect(directoryMode == 0o700)
        for name in try manager.contentsOfDirectory(atPath: fixture.storeDirectory.path) {
            let mode = try manager.attributesOfItem(atPath: fixture.storeDirectory.appendingPathComponent(name).path)[.posixPermissions] as? Int
            #expect(mode == 0o600, "\(name) is \(String(mode ?? 0, radix: 8)), not 0600")
        }
    }

    @Test("a second prefsd on the same bus is refused while the first keeps serving")
    func secondInstance() async throws {
        let fixture = try await ServiceFixture()
        let result = try runCommand(
            ServiceFixture.binary.path,
            [
                "--address", fixture.bus.address, "--store", fixture.bus.directory.appendingPathComponent("other").path,
            ])
        #expect(result.status == 75)
        #expect(result.stderr.contains("--replace"))
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.App", "k", .integer(1))
    }

    @Test("without a session bus prefsd says so and how to get one")
    func noSessionBus() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-nobus-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let result = try runCommand(
            "/usr/bin/env",
            [
                "-u", "DBUS_SESSION_BUS_ADDRESS", "-u", "DBUS_STARTER_ADDRESS", ServiceFixture.binary.path, "--store", directory.path,
            ])
        #expect(result.status == 69)
        #expect(result.stderr.contains("no session bus") && result.stderr.contains("dbus-run-session"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: directory.path), "nothing is created without a bus")
    }

    @Test("--replace takes over without losing an acknowledged write")
    func replace() async throws {
        let fixture = try await ServiceFixture()
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.App", "before", .integer(1))
        let successor = Process()
        successor.environment = helperEnvironment
        successor.executableURL = ServiceFixture.binary
        successor.arguments =
            ["--address", fixture.bus.address, "--store", fixture.storeDirectory.path, "--replace", "--log-level", "warning"]
            + fixture.administratorArguments
        try successor.run()
        defer { stop(successor, signal: SIGKILL) }
        // The old one exits by itself, cleanly, once its writes are done.
        #expect(await fixture.waitForExit() == 0)
        #expect(try await client.readValue("com.example.App", "before") == .integer(1))
        try await client.write("com.example.App", "after", .integer(2))
        #expect(try await client.readDomain("com.example.App") == ["before": .integer(1), "after": .integer(2)])
    }

    @Test("prefsd exits when its bus goes away")
    func busGone() async throws {
        let fixture = try await ServiceFixture()
        // Serving, not only owning the name: the store opens after the name is taken, and
        // stopping the bus also deletes the fixture's directory, store included (a store
        // deleted while it opens is a store error, exit 74, not the bus going away).
        let client = ServiceClient(connection: try fixture.connect())
        try await client.write("com.example.App", "served", .integer(1))
        fixture.bus.stop()
        let status = await fixture.waitForExit()
        #expect(status == 0)
    }

    @Test("kill -9 during a stream of writes loses no acknowledged write")
    func killDuringWrites() async throws {
        let fixture = try await ServiceFixture()
        for round in 0..<5 {
            let stream = WriteStream()
            let writers = stream.start(fixture, writers: 4, domain: "com.example.Crash\(round)")
            try await Task.sleep(for: .milliseconds(Int.random(in: 50...250)))
            // On a loaded machine the first answers (each writer's first call waits while
            // prefsd tells who it is) may come after the pause: kill once writes flow.
            let deadline = ContinuousClock.now + .seconds(30)
            while stream.acknowledged.withLock({ $0.isEmpty }), ContinuousClock.now < deadline {
                try await Task.sleep(for: .milliseconds(5))
            }
            fixture.killService()
            for writer in writers { writer.cancel(); await writer.value }
            try await fixture.startService()
            let client = ServiceClient(connection: try fixture.connect())
            let stored = try await client.readDomain("com.example.Crash\(round)")
            #expect(!stream.acknowledged.withLock { $0 }.isEmpty, "round \(round): no write was answered")
            #expect(stream.missing(from: stored).isEmpty, "round \(round): acknowledged writes lost: \(stream.missing(from: stored).prefix(10))")
        }
    }
}
