import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PreferencesRoaming
import PrefsdTestSupport
import Testing

extension Reliability {
    /// Values and names from sources that never crossed the bus (another machine's roaming
    /// file, managed and defaults plists, a store an older prefsd filled) obey the same
    /// rules as the bus's: what cannot be sent back never gets in, and what got in before
    /// cannot make a domain unreadable.
    @Suite("The store's rules, from every source")
    struct StoreRules {
        static let domain = "com.example.Editor"

        /// Values no client could be sent: a NUL in a string, a NUL in a dictionary key, a
        /// date of infinity, a date of NaN.
        static let unsendable: [(name: String, value: PropertyListValue)] = [
            ("NulString", .string("Evil\u{0}Theme")),
            ("NulDictionaryKey", .dictionary(["a\u{0}b": .integer(1)])),
            ("InfiniteDate", .date(secondsSince1970: .infinity)),
            ("NaNDate", .date(secondsSince1970: .nan)),
        ]

        @Test("a roaming peer's entry with a NUL string, a NUL dictionary key or a date of inf or NaN is set aside whole; the domain stays readable")
        func roamingPeer() async throws {
            let folder = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-roaming-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: folder) }
            let idFile = folder.deletingLastPathComponent().appendingPathComponent("prefsd-machine-id-\(UUID().uuidString)")
            try (String(repeating: "a1", count: 16) + "\n").write(to: idFile, atomically: true, encoding: .utf8)
            defer { try? FileManager.default.removeItem(at: idFile) }
            let fixture = try await ServiceFixture(arguments: ["--roaming-dir", folder.path, "--roaming-machine-id-file", idFile.path])
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            try await client.call(
                "Apply",
                [
                    .string("io.github.prefsd.Roaming"),
                    ServiceClient.values(["Domains": .array([.string(Self.domain)]), "MachineName": .string("here")]),
                    .stringArray([]),
                ])
            try await client.write(Self.domain, "Mine", .integer(1))

            // One file of a made-up machine for each value, a good key beside it.
            var names: [String] = []
            for (index, bad) in Self.unsendable.enumerated() {
                let machine = MachineID(derivedFrom: "peer-\(index)")
                let domain = try DomainName(Self.domain)
                var clock = HybridClock()
                let wall = UInt64(Date().timeIntervalSince1970 * 1000)
                let entries = [(bad.name, bad.value), ("GoodBeside\(bad.name)", PropertyListValue.integer(2))].map { key, value in
                    RoamingEntry(key: RoamingKey(domain, key), value: value, stamp: RoamingStamp(time: clock.tick(physical: wall), machine: machine))
                }
                let name = RoamingFolder.fileName(for: machine)
                let temporary = folder.appendingPathComponent(".\(name).tmp")
                try Data(RoamingFile(machine: machine, name: "peer\(index)", entries: entries).encoded()).write(to: temporary)
                try FileManager.default.moveItem(at: temporary, to: folder.appendingPathComponent(name))
                names.append(name)
            }

            let setAside = await eventually(timeout: .seconds(60)) {
                guard case .array(let items)? = try? await client.readVolatileDomain("io.github.prefsd.Roaming.Status")["SetAside"] else { return false }
                let files = items.compactMap { item -> String? in
                    if case .dictionary(let entry) = item, case .string(let file)? = entry["File"] { return file }
                    return nil
                }
                return Set(files).isSuperset(of: names)
            }
            let status = try? await client.readVolatileDomain("io.github.prefsd.Roaming.Status")
            #expect(setAside, "not every hostile file was set aside: \(String(describing: status))")
            // The domain reads, holds only what this machine wrote, and its history reads.
            #expect(try await client.readDomain(Self.domain) == ["Mine": .integer(1)])
            let history = try fixture.prefs("history", "--json", Self.domain)
            #expect(history.status == 0, "\(history.stderr)")
            #expect(fixture.isRunning)
        }

        @Test("a managed or defaults plist with a NUL string, a NUL dictionary key or a non-finite date is refused and named; the others take effect")
        func plists() async throws {
            let managed = try ServiceFixture.managedDirectory()
            defer { try? FileManager.default.removeItem(at: managed) }
            let arguments = ["--managed-dir", managed.path, "--allow-unowned-managed-dir"]
            let fixture = try await ServiceFixture(arguments: arguments)
            #expect(fixture.stopService() == 0)
            let defaults = fixture.administratorDirectory.appendingPathComponent("defaults")
            try FileManager.default.createDirectory(at: defaults, withIntermediateDirectories: true)
            // Binary plists: XML cannot hold a NUL, a binary plist can.
            func write(_ values: [String: Any], _ domain: String, in directory: URL) throws {
                let data = try PropertyListSerialization.data(fromPropertyList: values, format: .binary, options: 0)
                try data.write(to: directory.appendingPathComponent("\(domain).plist"))
            }
            let infinite = Date(timeIntervalSince1970: .infinity)
            try write(["Theme": "Evil\u{0}Theme", "Beside": 1], "com.example.NulString", in: managed)
            try write(["Map": ["a\u{0}b": 1]], "com.example.NulKey", in: managed)
            try write(["When": infinite], "com.example.Forever", in: managed)
            try write(["Proxy": "lab"], "com.example.Good", in: managed)
            try write(["Theme": "Evil\u{0}Theme"], "com.example.DefaultNul", in: defaults)
            try write(["When": infinite], "com.example.DefaultForever", in: defaults)
            try write(["Theme": "Adwaita"], "com.example.DefaultGood", in: defaults)
            try await fixture.startService(arguments: arguments)

            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            #expect(try await client.readValue("com.example.Good", "Proxy") == .string("lab"))
            #expect(try await client.readValue("com.example.DefaultGood", "Theme") == .string("Adwaita"))
            for domain in ["com.example.NulString", "com.example.NulKey", "com.example.Forever"] {
                #expect(try await client.perform(PreferencesCall.forcedKeys(domain)) == [], "\(domain) was put in force")
            }
            for domain in ["com.example.DefaultNul", "com.example.DefaultForever"] {
                #expect(try await client.perform(PreferencesCall.administratorDefaults(domain)) == [:], "\(domain) got defaults")
            }
            let log = fixture.log
            #expect(log.contains("a string holds a NUL character"), "\(log.suffix(3000))")
            #expect(log.contains("a dictionary key holds a NUL character"), "\(log.suffix(3000))")
            #expect(log.contains("a date must be a finite number of seconds"), "\(log.suffix(3000))")
        }

        @Test(
            "a store an older prefsd left with a NUL string, in the domain and its history, and a key in two spellings: readable, and prefs delete removes them for good"
        )
        func olderStore() async throws {
            let fixture = try await ServiceFixture()
            var client = ServiceClient(connection: try fixture.connect())
            try await client.write(Self.domain, "Theme", .string("placeholder"))
            try await client.write(Self.domain, "Good", .integer(1))
            try await client.write(Self.domain, "caf\u{E9}", .integer(3))
            client.connection.close()
            #expect(fixture.stopService() == 0)

            // What the older prefsd let in: a NUL string in the row and in its journal entry,
            // and the decomposed spelling of "café" as a row of its own.
            let database = fixture.storeDirectory.appendingPathComponent("store.sqlite").path
            let nul = PropertyListValue.string("Evil\u{0}Theme").encoded().map { String(format: "%02X", $0) }.joined()
            let decomposed = "cafe\u{301}"
            let sql = """
                UPDATE preference SET value = X'\(nul)' WHERE key = 'Theme';
                UPDATE history SET value = X'\(nul)' WHERE key = 'Theme';
                INSERT INTO preference(domain, key, value) SELECT domain, '\(decomposed)', value FROM preference WHERE key = 'caf\u{E9}';
                """
            let tampered = try runCommand("sqlite3", [database, sql])
            #expect(tampered.status == 0, "\(tampered.stderr)")

            try await fixture.startService()
            client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            #expect(try await client.readDomain(Self.domain) == ["Good": .integer(1), "caf\u{E9}": .integer(3)])
            let history = try fixture.prefs("history", "--json", Self.domain)
            #expect(history.status == 0, "\(history.stderr)")
            #expect(fixture.log.contains("left out"), "\(fixture.log.suffix(2000))")

            for key in ["Theme", "caf\u{E9}"] {
                let deleted = try fixture.prefs("delete", Self.domain, key)
                #expect(deleted.status == 0, "prefs delete \(key): \(deleted.stderr)")
            }
            let rows = try runCommand("sqlite3", [database, "SELECT key FROM preference ORDER BY key"])
            #expect(rows.stdout == "Good\n", "rows left: \(rows.stdout)")
            client.connection.close()

            // Nothing comes back after a restart.
            #expect(fixture.stopService() == 0)
            try await fixture.startService()
            let again = ServiceClient(connection: try fixture.connect())
            defer { again.connection.close() }
            #expect(try await again.readDomain(Self.domain) == ["Good": .integer(1)])
        }

        @Test("RevertKeyTo on a forced key is refused as Error.Forced, as a write is")
        func revertForcedKey() async throws {
            let managed = try ServiceFixture.managedDirectory(["com.example.Lab": ["Proxy": .string("lab")]])
            defer { try? FileManager.default.removeItem(at: managed) }
            let fixture = try await ServiceFixture(arguments: ["--managed-dir", managed.path, "--allow-unowned-managed-dir"])
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            try await client.write("com.example.Lab", "Other", .integer(1))
            let refusal = await client.refusal("RevertKeyTo", [.string("com.example.Lab"), .string("Proxy"), .uint64(0)])
            #expect(refusal == PreferencesErrorName.forced.busName)
            let write = await client.refusal("Write", [.string("com.example.Lab"), .string("Proxy"), .variant(.string("mine"))])
            #expect(write == PreferencesErrorName.forced.busName)
        }
    }
}
