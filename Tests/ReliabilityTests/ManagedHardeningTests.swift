import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

extension Reliability {
    /// Managed files the bus cannot carry, files that are not
    /// files, oversized files, and a managed directory that is replaced under prefsd.
    @Suite("Hostile managed files")
    struct HostileManagedFiles {
        /// `depth` arrays nested in one another around a string.
        static func nested(_ depth: Int) -> PropertyListValue {
            (0..<depth).reduce(PropertyListValue.string("core")) { inner, _ in .array([inner]) }
        }

        /// The reply of a call (bounded by 10 s, for a stalled machine): its body, or the error's name.
        static func answer(_ client: ServiceClient, _ member: String, _ body: [DBusValue]) async -> Result<[DBusValue], CallFailure> {
            do {
                return .success(
                    try await client.connection.call(
                        .methodCall(
                            destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                            member: member, body: body
                        ), timeout: .seconds(10)
                    ).body)
            } catch {
                if error.code == .remote, let name = error.name { return .failure(CallFailure(name)) }
                return .failure(CallFailure("\(error)"))
            }
        }

        @Test("managed values obey the bus's limits; a FIFO, a directory and an oversized file are refused as such; prefsd keeps answering")
        func unusableFiles() async throws {
            let directory = try ServiceFixture.managedDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try place(.dictionary(["Proxy": .string("lab")]), domain: "com.example.Good", in: directory)
            try place(.dictionary(["Deep": Self.nested(31), "Flat": .integer(1)]), domain: "com.example.Deep", in: directory)
            try place(.dictionary(["Big": .data(Data(repeating: 1, count: 8 << 10))]), domain: "com.example.Big", in: directory)
            // Over the default --max-managed-file-size (16 MiB): refused by its size, unread.
            try Data(repeating: UInt8(ascii: "x"), count: (16 << 20) + 1).write(to: directory.appendingPathComponent("com.example.Large.plist"))
            try FileManager.default.createDirectory(at: directory.appendingPathComponent("com.example.Dir.plist"), withIntermediateDirectories: false)
            #expect(mkfifo(directory.appendingPathComponent("com.example.Fifo.plist").path, 0o644) == 0)

            let fixture = try await ServiceFixture(arguments: [
                "--managed-dir", directory.path, "--allow-unowned-managed-dir",
                "--max-value-size", "4096",
            ])
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            // Every call is answered, whatever the directory holds.
            try await fixture.ping(client.connection, timeout: .seconds(10))
            #expect(try await client.readValue("com.example.Good", "Proxy") == .string("lab"))
            for domain in ["com.example.Deep", "com.example.Big", "com.example.Large", "com.example.Dir", "com.example.Fifo"] {
                let answer = await Self.answer(client, "ForcedKeys", [.string(domain)])
                #expect(answer == .success([.stringArray([])]), "\(domain) was put in force: \(answer)")
            }
            // ReadDomain of the domain that held the too-deep value answers (it used to hang).
            let deep = await Self.answer(client, "ReadDomain", [.string("com.example.Deep")])
            #expect(deep == .failure(CallFailure(PreferencesErrorName.notFound.busName)))

            let log = fixture.log
            #expect(log.contains("nests too deeply"), "no refusal of the 31-array value: \(log.suffix(3000))")
            #expect(log.contains("over the limit of 4096 for one value"), "the 8 KiB value was not refused: \(log.suffix(3000))")
            #expect(log.contains("over the limit of 16777216 for a managed file"), "the large file was not refused: \(log.suffix(3000))")
            #expect(log.contains("not a regular file but a directory"), "the directory was not named as such: \(log.suffix(3000))")
            #expect(log.contains("not a regular file but a FIFO"), "the FIFO was not named as such: \(log.suffix(3000))")
            #expect(!log.contains("ermission denied"))
            print("reliability.managed refused=deep31,value8KiB,file>16MiB,directory,fifo answered_within=1s")
        }

        @Test("the managed directory removed and made again, or replaced by another: its files still take effect")
        func directoryReplaced() async throws {
            let directory = try ServiceFixture.managedDirectory()
            defer { try? FileManager.default.removeItem(at: directory) }
            try place(.dictionary(["Proxy": .string("first")]), domain: "com.example.Lab", in: directory)
            let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path, "--allow-unowned-managed-dir"])
            let client = ServiceClient(connection: try fixture.connect())
            defer { client.connection.close() }
            let proxy = { try? await client.readValue("com.example.Lab", "Proxy") }
            #expect(await proxy() == .string("first"))

            // Removed, then made again with a new file.
            try FileManager.default.removeItem(at: directory)
            #expect(try await eventually { await proxy() == nil }, "the removed directory's keys stayed forced")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
            try place(.dictionary(["Proxy": .string("second")]), domain: "com.example.Lab", in: directory)
            #expect(try await eventually { await proxy() == .string("second") }, "the directory made again is not watched")

            // Replaced: the old one renamed away, a new one renamed into its place.
            let staging = directory.deletingLastPathComponent().appendingPathComponent("\(directory.lastPathComponent).new")
            let old = directory.deletingLastPathComponent().appendingPathComponent("\(directory.lastPathComponent).old")
            defer {
                try? FileManager.default.removeItem(at: staging)
                try? FileManager.default.removeItem(at: old)
            }
            try FileManager.default.createDirectory(at: staging, withIntermediateDirectories: false)
            try place(.dictionary(["Proxy": .string("third")]), domain: "com.example.Lab", in: staging)
            #expect(rename(directory.path, old.path) == 0)
            #expect(rename(staging.path, directory.path) == 0)
            #expect(try await eventually { await proxy() == .string("third") }, "the replacing directory is not watched")
            // And it is watched by inotify again, not only found once: an edit takes effect.
            try place(.dictionary(["Proxy": .string("fourth")]), domain: "com.example.Lab", in: directory)
            #expect(try await eventually { await proxy() == .string("fourth") })
            // Edits in the old, renamed directory do not count any more.
            try place(.dictionary(["Proxy": .string("stale")]), domain: "com.example.Lab", in: old)
            try place(.dictionary(["Sentinel": .integer(1)]), domain: "com.example.Sentinel", in: directory)
            #expect(try await eventually { (try? await client.readValue("com.example.Sentinel", "Sentinel")) == .integer(1) })
            #expect(await proxy() == .string("fourth"))
        }
    }
}

/// A call that failed: the D-Bus error's name, or what else went wrong.
struct CallFailure: Error, Equatable {
    let name: String
    init(_ name: String) { self.name = name }
}
