import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// On a full disk, removals free room, and writes succeed again
    /// afterwards, in the same process and after a restart.
    @Suite("Disk full, then room freed by removals")
    struct DiskFullRecovery {
        static let domain = "com.example.Fill"
        static let valueBytes = 8_000

        /// The bytes of the `index`-th 8 KB value.
        static func value(_ index: Int) -> PropertyListValue {
            .data(Data(repeating: UInt8(truncatingIfNeeded: index), count: valueBytes))
        }

        /// Fills a store on a 3 MiB tmpfs with 8 KB values until one is refused, then
        /// removes 40 of them (each removal must go through); returns the keys kept.
        static func fillAndRemove(_ client: ServiceClient) async throws -> [String] {
            var keys: [String] = []
            var refusal: String?
            for index in 0..<2_000 {
                let key = "fill\(index)"
                do {
                    try await client.write(domain, key, value(index))
                    keys.append(key)
                } catch let error as DBusError where error.code == .remote {
                    refusal = error.name
                    break
                }
            }
            #expect(refusal == PreferencesErrorName.storageFailed.busName, "the 3 MiB disk never filled: \(keys.count) values taken")
            #expect(keys.count > 40)
            for key in keys.suffix(40) {
                let refused = await client.refusal("Remove", [.string(domain), .string(key)])
                #expect(refused == nil, "Remove \(key) was refused on the full disk: \(refused ?? "")")
            }
            print("reliability.diskfull-recovery acknowledged_before_full=\(keys.count) removed=40")
            return Array(keys.dropLast(40))
        }

        /// The sizes of the store's files, for the log.
        static func sizes(_ store: URL) -> String {
            let names = ["store.sqlite", "store.sqlite-wal", "store.reserve"]
            return names.map { name in
                let size = (try? FileManager.default.attributesOfItem(atPath: store.appendingPathComponent(name).path))?[.size] as? Int
                return "\(name)=\(size.map(String.init) ?? "absent")"
            }.joined(separator: " ")
        }

        /// Writes an 8 KB value and an int32 under new keys; both must be stored.
        static func writeAgain(_ client: ServiceClient, tag: String) async throws -> [String] {
            let big = await client.refusal("Write", [.string(domain), .string("after\(tag)"), .variant(.bytes(Array(repeating: 9, count: valueBytes)))])
            #expect(big == nil, "an 8 KB write after the removals was refused (\(tag)): \(big ?? "")")
            let small = await client.refusal("Write", [.string(domain), .string("int\(tag)"), .variant(.int32(42))])
            #expect(small == nil, "an int32 write after the removals was refused (\(tag)): \(small ?? "")")
            return ["after\(tag)", "int\(tag)"]
        }

        @Test("after removing 40 values of 8 KB from a full 3 MiB tmpfs, 8 KB and int32 writes succeed without a restart")
        func withoutRestart() async throws {
            let disk = try SmallFileSystem(megabytes: 3)
            let store = disk.mountPoint.appendingPathComponent("store")
            let fixture = try await ServiceFixture(arguments: ["--store", store.path])
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            var kept = try await Self.fillAndRemove(client)
            kept += try await Self.writeAgain(client, tag: "Removals")
            // The room of the 40 removed values takes about as many new ones; then the disk
            // is full again, and a removal still goes through.
            var more = 0
            while more < 200 {
                let key = "again\(more)"
                if await client.refusal("Write", [.string(Self.domain), .string(key), .variant(.bytes(Array(repeating: 3, count: Self.valueBytes)))]) != nil {
                    break
                }
                kept.append(key)
                more += 1
            }
            #expect(more >= 20, "only \(more) of the 40 removed values' room could be used again")
            #expect(more < 200, "the disk never filled again")
            #expect(await client.refusal("Remove", [.string(Self.domain), .string(kept.removeLast())]) == nil)
            #expect(Set(try await client.readDomain(Self.domain).keys) == Set(kept))
            print("reliability.diskfull-recovery restart=false written_again=\(more) \(Self.sizes(store))")

            #expect(fixture.stopService() == 0)
            try await fixture.startService(arguments: ["--store", store.path])
            let after = ServiceClient(connection: try fixture.connect())
            defer { after.connection.close() }
            #expect(Set(try await after.readDomain(Self.domain).keys) == Set(kept))
            fixture.stopService()
        }

        @Test("after removing 40 values of 8 KB from a full 3 MiB tmpfs, 8 KB and int32 writes succeed after a restart")
        func afterRestart() async throws {
            let disk = try SmallFileSystem(megabytes: 3)
            let store = disk.mountPoint.appendingPathComponent("store")
            let fixture = try await ServiceFixture(arguments: ["--store", store.path])
            let client = ServiceClient(connection: try fixture.connect())
            var kept = try await Self.fillAndRemove(client)
            client.connection.close()
            #expect(fixture.stopService() == 0)
            print("reliability.diskfull-recovery stopped \(Self.sizes(store))")

            try await fixture.startService(arguments: ["--store", store.path])
            let after = ServiceClient(connection: try fixture.connect())
            defer { after.connection.close() }
            kept += try await Self.writeAgain(after, tag: "Restart")
            #expect(Set(try await after.readDomain(Self.domain).keys) == Set(kept))
            print("reliability.diskfull-recovery restart=true \(Self.sizes(store))")
            fixture.stopService()
        }
    }
}
