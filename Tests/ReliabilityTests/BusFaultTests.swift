import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

extension Reliability {
    /// Clients that vanish mid-call, a bus that goes away, a second
    /// prefsd, and a `--replace` hand-over under load.
    @Suite("Bus faults")
    struct BusFaults {
        @Test("a client that disconnects in the middle of a call: prefsd unharmed, the write fully there or absent")
        func clientVanishes() async throws {
            let fixture = try await ServiceFixture()
            let rounds = Long.pick(200, long: 2000)
            let payload = { (index: Int) in PropertyListValue.data(Data(repeating: UInt8(index % 256), count: 64 << 10)) }
            for index in 0..<rounds {
                let connection = try fixture.connect()
                let message =
                    index % 2 == 0
                    ? PreferencesCall.write("com.example.Vanish", "k\(index)", payload(index)).message
                    : PreferencesCall.apply("com.example.Vanish", set: ["a\(index)": payload(index), "b\(index)": .integer(Int64(index))], remove: []).message
                // prefsd knows who this client is before the write (a sender that is gone
                // before prefsd could tell who it was is refused, see Sandboxed applications).
                _ = try await connection.call(PreferencesCall.version().message)
                try connection.send(message)
                connection.close()
            }
            let client = ServiceClient(connection: try fixture.connect())
            try await fixture.ping(client.connection)
            #expect(fixture.isRunning)
            // Calls of closed connections may still be arriving or committing: what was
            // served must stay, what comes later must be whole too.
            func checkWhole(_ domain: [String: PropertyListValue]) -> Int {
                var present = 0
                for index in 0..<rounds {
                    if index % 2 == 0 {
                        if let value = domain["k\(index)"] { present += 1; #expect(value == payload(index)) }
                    } else {
                        // Apply is all or nothing.
                        #expect((domain["a\(index)"] == nil) == (domain["b\(index)"] == nil), "Apply \(index) half there")
                        if domain["a\(index)"] != nil { present += 1; #expect(domain["a\(index)"] == payload(index)) }
                    }
                }
                return present
            }
            // None of the writes may have arrived yet: no domain is an empty one.
            func contents(_ reader: ServiceClient) async throws -> [String: PropertyListValue] {
                do {
                    return try await reader.readDomain("com.example.Vanish")
                } catch let error as DBusError where error.isRemote(named: PreferencesErrorName.notFound.busName) {
                    return [:]
                }
            }
            let running = try await contents(client)
            let present = checkWhole(running)
            client.connection.close()
            #expect(fixture.stopService() == 0)
            try await fixture.startService()
            let after = ServiceClient(connection: try fixture.connect())
            defer { after.connection.close() }
            let restarted = try await contents(after)
            _ = checkWhole(restarted)
            #expect(running.allSatisfy { restarted[$0.key] == $0.value }, "a restart lost what was served")
            print("reliability.busfault.vanishing_clients calls=\(rounds) present=\(present) absent=\(rounds - present) partial=0 prefsd_running=true")
        }

        @Test("the bus goes away during writes: prefsd exits 0 and every acknowledged write is on disk")
        func busGoesAway() async throws {
            let store = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-store-\(UUID().uuidString)")
            defer { try? FileManager.default.removeItem(at: store) }
            let fixture = try await ServiceFixture(arguments: ["--store", store.path])
            let stream = WriteStream()
            let writers = stream.start(fixture, writers: 4, domain: "com.example.BusGone")
            // The bus goes while writes flow: once some were answered, not after a fixed pause.
            #expect(await eventually(timeout: .seconds(60)) { stream.acknowledged.withLock { $0.count } >= 20 }, "no write was answered")
            fixture.bus.stop()
            let status = await fixture.waitForExit()
            for writer in writers { writer.cancel(); await writer.value }
            #expect(status == 0, "prefsd ended with \(String(describing: status)) when its bus went away")

            let next = try await ServiceFixture(arguments: ["--store", store.path])
            let client = ServiceClient(connection: try next.connect())
            defer { client.connection.close() }
            let stored = try await client.readDomain("com.example.BusGone")
            let missing = stream.missing(from: stored)
            #expect(missing.isEmpty, "acknowledged but lost: \(missing.prefix(10))")
            let acknowledged = stream.acknowledged.withLock { $0.count }
            #expect(acknowledged > 0)
            print("reliability.busfault.bus_gone exit_status=\(status.map(String.init) ?? "none") acknowledged=\(acknowledged) lost=\(missing.count)")
        }

        @Test("a second prefsd for the same store on another bus is refused while the first serves")
        func secondInstanceSameStore() async throws {
            let fixture = try await ServiceFixture()
            let other = try PrivateBus()
            defer { other.stop() }
            let result = try runCommand(
                ServiceFixture.binary.path,
                [
                    "--address", other.address, "--store", fixture.storeDirectory.path, "--log-level", "warning",
                ], timeout: .seconds(60))
            #expect(result.status == 74, "second prefsd: \(result.status) \(result.stderr)")
            #expect(result.stderr.contains("another prefsd is serving this store"), "\(result.stderr)")
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            try await client.write("com.example.App", "k", .integer(1))
            print("reliability.busfault.second_instance same_bus_status=75(LifecycleTests) same_store_status=\(result.status)")
        }

        @Test("--replace under a stream of writes loses no acknowledged write")
        func replaceUnderLoad() async throws {
            let fixture = try await ServiceFixture()
            let stream = WriteStream()
            let writers = stream.start(fixture, writers: 6, domain: "com.example.Replace")
            let before = await eventually(timeout: .seconds(60)) { stream.acknowledged.withLock { $0.count } >= 20 }
            #expect(before, "no write was acknowledged before the hand-over")
            let successor = Process()
            successor.environment = helperEnvironment
            successor.executableURL = ServiceFixture.binary
            successor.arguments =
                ["--address", fixture.bus.address, "--store", fixture.storeDirectory.path, "--replace", "--log-level", "warning"]
                + fixture.administratorArguments
            try successor.run()
            defer { stop(successor, signal: SIGKILL) }
            #expect(await fixture.waitForExit() == 0, "the replaced prefsd did not exit cleanly")
            // Writes go on, now to the successor: wait until it answered some.
            let atHandover = stream.acknowledged.withLock { $0.count }
            let answeredBySuccessor = await eventually(timeout: .seconds(60)) { stream.acknowledged.withLock { $0.count } >= atHandover + 20 }
            for writer in writers { writer.cancel(); await writer.value }
            let total = stream.acknowledged.withLock { $0.count }
            #expect(answeredBySuccessor, "no write was answered by the successor")

            let client = ServiceClient(connection: try fixture.connect())
            let stored = try await client.readDomain("com.example.Replace")
            var missing = stream.missing(from: stored)
            #expect(missing.isEmpty, "lost in the hand-over: \(missing.prefix(10))")
            client.connection.close()
            // And on disk: stop the successor and read the store with a fresh prefsd.
            #expect(stop(successor) == 0)
            try await fixture.startService()
            let after = ServiceClient(connection: try fixture.connect())
            defer { after.connection.close() }
            missing = stream.missing(from: try await after.readDomain("com.example.Replace"))
            #expect(missing.isEmpty, "lost after the successor stopped: \(missing.prefix(10))")
            print(
                "reliability.busfault.replace acknowledged=\(total) before_handover=\(atHandover) refused_during_handover=\(stream.refused.withLock { $0 }) lost=\(missing.count)"
            )
        }
    }
}
