import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// Counts that keep every reply inside the bus's limits, a
    /// reply that still cannot be sent answered `LimitsExceeded`, and quotas that bound the
    /// disk and memory an entry really costs.
    @Suite("Limits on counts, replies and quotas")
    struct Limits {
        static let quotaExceeded = PreferencesErrorName.quotaExceeded.busName

        @Test("the count limits: domains, keys in one domain, volatile domains; each refused with QuotaExceeded naming its flag")
        func countLimits() async throws {
            let fixture = try await ServiceFixture(arguments: ["--max-domains", "40", "--max-keys-per-domain", "20", "--max-volatile-domains", "5"])
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            for index in 0..<40 {
                try await client.write("com.example.D\(index)", "k", .integer(Int64(index)))
            }
            #expect(await client.refusal("Write", [.string("com.example.D40"), .string("k"), .variant(.int64(1))]) == Self.quotaExceeded)
            #expect(await client.refusal("ReplaceDomain", [.string("com.example.D41"), ServiceClient.values(["k": .integer(1)])]) == Self.quotaExceeded)
            // An existing domain still takes writes, and removing one makes room for another.
            try await client.write("com.example.D0", "more", .integer(2))
            try await client.call("RemoveDomain", [.string("com.example.D1")])
            try await client.write("com.example.D40", "k", .integer(40))
            #expect(try await client.strings("Domains").count == 40)

            let twenty = Dictionary(uniqueKeysWithValues: (0..<20).map { ("key\($0)", PropertyListValue.integer(Int64($0))) })
            #expect(await client.refusal("ReplaceDomain", [.string("com.example.D2"), ServiceClient.values(twenty)]) == nil)
            #expect(await client.refusal("Write", [.string("com.example.D2"), .string("key20"), .variant(.int64(1))]) == Self.quotaExceeded)
            #expect(
                await client.refusal("Apply", [.string("com.example.D2"), ServiceClient.values(["key20": .integer(1)]), .stringArray(["key0"])]) == nil)

            for index in 0..<5 {
                try await client.call("SetVolatileDomain", [.string("com.example.V\(index)"), ServiceClient.values([:])])
            }
            #expect(await client.refusal("SetVolatileDomain", [.string("com.example.V5"), ServiceClient.values([:])]) == Self.quotaExceeded)
            let manyKeys = Dictionary(uniqueKeysWithValues: (0..<21).map { ("key\($0)", PropertyListValue.integer(1)) })
            try await client.call("RemoveVolatileDomain", [.string("com.example.V0")])
            #expect(await client.refusal("SetVolatileDomain", [.string("com.example.V0"), ServiceClient.values(manyKeys)]) == Self.quotaExceeded)
            #expect(try await client.strings("VolatileDomains").count == 4)

            do {
                try await client.write("com.example.D99", "k", .integer(1))
                Issue.record("the 41st domain was accepted")
            } catch let error as DBusError where error.code == .remote {
                #expect(error.message.contains("--max-domains"), "the refusal does not name its flag: \(error.message)")
            }
        }

        /// 20,000 domains against a 4 MiB reply bound by default (a few seconds);
        /// `PREFSD_LONG_TESTS=1` stores 270,000 and keeps the default bound: a ~70 MB reply,
        /// over the 64 MiB D-Bus allows an array (a debug prefsd loads them in ~25 s).
        static let oversized = Long.pick((domains: 20_000, flags: ["--max-reply-size", "\(4 << 20)"]), long: (domains: 270_000, flags: []))

        @Test("more domains stored than one reply can carry: Domains is answered LimitsExceeded at once, never silence; prefsd keeps answering")
        func replyTooLarge() async throws {
            let count = Self.oversized.domains
            let fixture = try await ServiceFixture()
            let client = ServiceClient(connection: try fixture.connect())
            try await client.write("com.example.Seed", "k", .integer(1))
            client.connection.close()
            #expect(fixture.stopService() == 0)
            // Domains of 255-byte names, 260 bytes each in a Domains reply. Made with SQL
            // (writing them one by one takes minutes), as an older prefsd or a larger
            // --max-domains could have left them.
            let database = fixture.storeDirectory.appendingPathComponent("store.sqlite").path
            let sql = """
                WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < \(count))
                INSERT INTO preference(domain, key, value)
                SELECT printf('%0255d', i), 'k', (SELECT value FROM preference WHERE domain = 'com.example.Seed') FROM n;
                """
            let filled = try runCommand("sqlite3", [database, sql])
            #expect(filled.status == 0, "sqlite3: \(filled.stderr)")

            try await fixture.startService(arguments: Self.oversized.flags)
            let caller = try fixture.connect()
            defer { caller.close() }
            let started = ContinuousClock.now
            var answer = ""
            do {
                // Generous: the first call also waits for the domains to load.
                _ = try await caller.call(
                    .methodCall(
                        destination: PreferencesBus.busName, path: PreferencesBus.objectPath,
                        interface: PreferencesBus.interface, member: "Domains"
                    ), timeout: .seconds(60))
                answer = "a reply"
            } catch {
                answer = error.code == .remote ? error.name ?? "" : "\(error)"
            }
            let elapsed = milliseconds(since: started)
            #expect(answer == StandardErrorName.limitsExceeded, "Domains over the array limit answered: \(answer)")
            #expect(fixture.isRunning)
            // Other clients are still answered (the bound only covers a stalled machine; the
            // refusal's time is the figure printed below).
            let other = ServiceClient(connection: try fixture.connect())
            defer { other.connection.close() }
            try await fixture.ping(other.connection, timeout: .seconds(10))
            #expect(try await other.readValue("com.example.Seed", "k") == .integer(1))
            print(
                "reliability.limits domains=\(count + 1) flags=\(Self.oversized.flags) domains_reply=\(answer) answered_after_ms=\(Int(elapsed)) \(fixture.memory.map(String.init(describing:)) ?? "")"
            )
        }

        /// The bytes of the store's files (database, WAL, shared memory), not the reserve.
        static func storeBytes(_ fixture: ServiceFixture) -> Int {
            fixture.storeEntries.filter { $0.hasPrefix("store.sqlite") }.reduce(0) { total, name in
                total + (((try? FileManager.default.attributesOfItem(atPath: fixture.storeDirectory.appendingPathComponent(name).path))?[.size] as? Int) ?? 0)
            }
        }

        @Test("a full store quota bounds the disk and memory of one-key domains; empty volatile domains and huge Applys count too")
        func quotaBoundsDiskAndMemory() async throws {
            let quota = 8 << 20
            let fixture = try await ServiceFixture(arguments: [
                "--max-store-size", "\(quota)", "--max-volatile-size", "\(1 << 20)",
            ])
            let baseline = try #require(fixture.memory)
            // One-key domains with tiny values, the costliest shape per byte of data, until
            // the quota refuses one. Today's counting (key and value only) would take
            // ~300,000 of them; 60,000 is the cap.
            let writers = 16
            let cap = 60_000
            let written = Locked(0)
            let refusal = Locked<String?>(nil)
            try await withThrowingTaskGroup(of: Void.self) { group in
                for writer in 0..<writers {
                    let connection = try fixture.connect()
                    group.addTask {
                        defer { connection.close() }
                        let client = ServiceClient(connection: connection)
                        var index = writer
                        while index < cap, refusal.withLock({ $0 }) == nil {
                            if let name = await client.refusal("Write", [.string("com.example.quota.d\(index)"), .string("k"), .variant(.int64(Int64(index)))])
                            {
                                refusal.withLock { $0 = $0 ?? name }
                                return
                            }
                            written.withLock { $0 += 1 }
                            index += writers
                        }
                    }
                }
                try await group.waitForAll()
            }
            let domains = written.withLock { $0 }
            #expect(refusal.withLock { $0 } == Self.quotaExceeded, "no QuotaExceeded after \(domains) one-key domains in an 8 MiB quota")
            let full = try #require(fixture.memory)
            let disk = Self.storeBytes(fixture)
            let rssGrowth = (full.currentKiB - baseline.currentKiB) * 1024
            let diskFactor = Double(disk) / Double(quota)
            let memoryFactor = Double(rssGrowth) / Double(quota)
            #expect(diskFactor <= 2, "the store takes \(disk) bytes on disk for a quota of \(quota)")
            #expect(memoryFactor <= 2, "prefsd grew by \(rssGrowth) bytes for a quota of \(quota)")

            // Cold: a restart loads the full store.
            #expect(fixture.stopService() == 0)
            try await fixture.startService(arguments: [
                "--max-store-size", "\(quota)", "--max-volatile-size", "\(1 << 20)",
            ])
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            #expect(try await client.strings("Domains").count == domains)
            let cold = try #require(fixture.memory)
            let coldFactor = Double((cold.currentKiB - baseline.currentKiB) * 1024) / Double(quota)

            // Empty volatile domains cost their name and overhead: a 1 MiB volatile quota fills.
            var volatile = 0
            var volatileRefusal: String?
            while volatile < 20_000 {
                volatileRefusal = await client.refusal("SetVolatileDomain", [.string("com.example.quota.v\(volatile)"), ServiceClient.values([:])])
                if volatileRefusal != nil { break }
                volatile += 1
            }
            #expect(volatileRefusal == Self.quotaExceeded, "no QuotaExceeded after \(volatile) empty volatile domains in a 1 MiB quota")

            // An Apply of 262,000 tiny keys is refused (keys in one domain, and their real
            // cost), and prefsd still answers others.
            let tiny = PropertyListValue.dictionary(Dictionary(uniqueKeysWithValues: (0..<262_000).map { ("k\($0)", PropertyListValue.boolean(true)) }))
            let other = ServiceClient(connection: try fixture.connect())
            defer { other.connection.close() }
            #expect(await other.refusal("Apply", [.string("com.example.quota.Big"), tiny.dbusValue, .stringArray([])]) == Self.quotaExceeded)
            try await fixture.ping(client.connection, timeout: .seconds(10))
            let after = try #require(fixture.memory)
            print(
                String(
                    format:
                        "reliability.quota store_quota=%dMiB one_key_domains=%d disk=%.1fMiB disk_factor=%.2f rss_growth=%.1fMiB rss_factor=%.2f cold_rss_growth=%.1fMiB cold_rss_factor=%.2f empty_volatile_domains_in_1MiB=%d apply_262000_keys=%@ peak_rss=%.1fMiB",
                    quota >> 20, domains, Double(disk) / 1_048_576, diskFactor, Double(rssGrowth) / 1_048_576, memoryFactor,
                    Double(cold.currentKiB - baseline.currentKiB) / 1024, coldFactor, volatile, "QuotaExceeded", after.peakMiB))
        }
    }
}
