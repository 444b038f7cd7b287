import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// When the disk is full (or a file-size limit is reached) a write is
    /// refused with `StorageFailed`, the service stays up, and writes work again with room.
    @Suite("Disk full and I/O errors")
    struct DiskFull {
        /// Writes 64 KiB values under new keys until one is refused; returns the keys that
        /// were acknowledged and the refusal.
        static func fill(_ client: ServiceClient, domain: String, limit: Int = 400) async throws -> (keys: [String], refusal: DBusError?) {
            var keys: [String] = []
            for index in 0..<limit {
                let key = "fill\(index)"
                do {
                    try await client.write(domain, key, .data(Data(repeating: UInt8(index % 256), count: 64 << 10)))
                    keys.append(key)
                } catch let error as DBusError {
                    return (keys, error)
                }
            }
            return (keys, nil)
        }

        /// Checks that the refusal is `StorageFailed` with a message a person can act on,
        /// and that prefsd serves on with its data intact.
        static func checkRefusedAndIntact(
            _ fixture: ServiceFixture, _ client: ServiceClient, refusal: DBusError?, domain: String, keys: [String]
        ) async throws {
            guard let refusal, refusal.code == .remote, let name = refusal.name else {
                Issue.record("no write was refused: \(String(describing: refusal))")
                return
            }
            let message = refusal.message
            #expect(name == PreferencesErrorName.storageFailed.busName)
            #expect(message.contains("not saved"), "unclear message: \(message)")
            print("reliability.diskfull refusal=\(name) message=\"\(message)\"")
            #expect(fixture.isRunning, "prefsd died when the disk filled")
            try await fixture.ping(client.connection)
            #expect(try await client.readValue("com.example.Early", "kept") == .string("before the disk filled"))
            let stored = try await client.readDomain(domain)
            #expect(Set(stored.keys) == Set(keys), "memory and acknowledged writes disagree after the refusal")
        }

        @Test("a file-size limit (prlimit --fsize): StorageFailed, service up, writes succeed again once raised")
        func fileSizeLimit() async throws {
            let fixture = try await ServiceFixture()
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            try await client.write("com.example.Early", "kept", .string("before the disk filled"))
            guard let pid = fixture.pid else { throw FixtureError("no prefsd") }

            // Files may grow 1 MiB past what the store holds now; SIGXFSZ must not kill prefsd.
            let sizes = fixture.storeEntries.map { name in
                ((try? FileManager.default.attributesOfItem(atPath: fixture.storeDirectory.appendingPathComponent(name).path))?[.size] as? Int) ?? 0
            }
            let limit = (sizes.max() ?? 0) + (1 << 20)
            let lowered = try runCommand("prlimit", ["--pid", "\(pid)", "--fsize=\(limit):unlimited"])
            #expect(lowered.status == 0, "prlimit: \(lowered.stderr)")

            let (keys, refusal) = try await Self.fill(client, domain: "com.example.Fill")
            #expect(!keys.isEmpty)
            try await Self.checkRefusedAndIntact(fixture, client, refusal: refusal, domain: "com.example.Fill", keys: keys)
            // Several more refusals in a row do not harm it either.
            for attempt in 0..<5 {
                #expect(
                    await client.refusal(
                        "Write",
                        [
                            .string("com.example.Fill"), .string("again\(attempt)"),
                            .variant(.bytes(Array(repeating: 1, count: 512 << 10))),
                        ])
                        == PreferencesErrorName.storageFailed.busName)
            }

            // Room again: the same process takes writes.
            let raised = try runCommand("prlimit", ["--pid", "\(pid)", "--fsize=unlimited:unlimited"])
            #expect(raised.status == 0, "prlimit: \(raised.stderr)")
            try await client.write("com.example.Fill", "afterRoom", .integer(1))
            #expect(fixture.pid == pid, "prefsd was restarted")

            // And a restart keeps everything acknowledged.
            #expect(fixture.stopService() == 0)
            try await fixture.startService()
            let after = ServiceClient(connection: try fixture.connect())
            defer { after.connection.close() }
            let stored = try await after.readDomain("com.example.Fill")
            #expect(Set(stored.keys) == Set(keys + ["afterRoom"]))
            #expect(try await after.readValue("com.example.Early", "kept") == .string("before the disk filled"))
            print("reliability.diskfull kind=prlimit-fsize limit=\(limit) acknowledged_before_full=\(keys.count) lost=0 recovered_without_restart=true")
        }

        @Test("a full tmpfs (ENOSPC): StorageFailed, service up, removals still go through, writes succeed again once it grows")
        func fullFileSystem() async throws {
            let disk = try SmallFileSystem(megabytes: 3)
            let store = disk.mountPoint.appendingPathComponent("store")
            let reserve = store.appendingPathComponent("store.reserve")  // the README names it
            // No history: on a full disk the history gives up its room (README, History), which
            // would let the 256 KB write below through; here the room removals free is theirs only.
            let fixture = try await ServiceFixture(arguments: ["--store", store.path, "--history-entries", "0"])
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            try await client.write("com.example.Early", "kept", .string("before the disk filled"))
            #expect(FileManager.default.fileExists(atPath: reserve.path), "no reserve in \(fixture.storeEntries)")

            let (keys, refusal) = try await Self.fill(client, domain: "com.example.Fill")
            #expect(!keys.isEmpty)
            try await Self.checkRefusedAndIntact(fixture, client, refusal: refusal, domain: "com.example.Fill", keys: keys)

            // The disk is full, yet removals go through (the WAL needs room even to delete),
            // and the room the reserve gives them is not eaten by the next write: a value
            // larger than the room the removals freed is refused.
            let removed = Array(keys.prefix(3))
            for key in removed {
                #expect(await client.refusal("Remove", [.string("com.example.Fill"), .string(key)]) == nil, "Remove \(key) failed on a full disk")
            }
            #expect(!FileManager.default.fileExists(atPath: reserve.path), "the reserve was not used")
            #expect(
                await client.refusal(
                    "Write",
                    [
                        .string("com.example.Fill"), .string("stillFull"),
                        .variant(.bytes(Array(repeating: 7, count: 4 * (64 << 10)))),
                    ])
                    == PreferencesErrorName.storageFailed.busName)
            #expect(await client.refusal("RemoveDomain", [.string("com.example.Early")]) == nil, "RemoveDomain failed on a full disk")
            #expect(try await client.strings("Domains") == ["com.example.Fill"])

            try disk.grow(megabytes: 64)
            try await client.write("com.example.Fill", "afterRoom", .integer(1))
            let reserveSize = (try? FileManager.default.attributesOfItem(atPath: reserve.path))?[.size] as? Int
            #expect(reserveSize == 1 << 20, "the reserve was not made again once there was room")

            #expect(fixture.stopService() == 0)
            try await fixture.startService(arguments: ["--store", store.path, "--history-entries", "0"])
            let after = ServiceClient(connection: try fixture.connect())
            defer { after.connection.close() }
            let expected = Set(keys).subtracting(removed).union(["afterRoom"])
            #expect(Set(try await after.readDomain("com.example.Fill").keys) == expected)
            #expect(await after.refusal("Read", [.string("com.example.Early"), .string("kept")]) == PreferencesErrorName.notFound.busName)
            fixture.stopService()
            print(
                "reliability.diskfull kind=tmpfs size=3MiB acknowledged_before_full=\(keys.count) removed_while_full=\(removed.count + 1) lost=0 recovered_without_restart=true"
            )
        }
    }
}
