import Foundation
import PreferencesModel
import PreferencesRoaming
import PrefsdTestSupport
import Synchronization
import Testing

/// One prefsd roaming `com.example.Editor` through a folder the test writes by hand (no
/// sync engine): what prefsd makes of the files put there.
@Suite("A roaming folder written by hand")
struct RoamingFolderTests {
    static let editor = "com.example.Editor"

    /// A prefsd with a roaming folder and a machine ID of its own.
    struct Machine {
        let root: URL
        let folder: URL
        let arguments: [String]
        let identity: MachineID
        let fixture: ServiceFixture
        let client: ServiceClient

        init(extra: [String] = []) async throws {
            root = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-roam-\(UUID().uuidString)")
            folder = root.appendingPathComponent("roaming", isDirectory: true)
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let id = UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased()
            let idFile = root.appendingPathComponent("machine-id")
            try (id + "\n").write(to: idFile, atomically: true, encoding: .utf8)
            identity = MachineID(derivedFrom: id)
            arguments = ["--roaming-dir", folder.path, "--roaming-machine-id-file", idFile.path] + extra
            fixture = try await ServiceFixture(arguments: arguments)
            client = ServiceClient(connection: try fixture.connect())
            try await client.write("io.github.prefsd.Roaming", "Domains", .array([.string(RoamingFolderTests.editor)]))
        }

        func status() async -> [String: PropertyListValue] {
            (try? await client.readVolatileDomain("io.github.prefsd.Roaming.Status")) ?? [:]
        }

        func value(_ key: String) async -> PropertyListValue? { try? await client.readValue(RoamingFolderTests.editor, key) }

        /// The environment of a dconf client of this machine's prefsd (`--dconf`): its bus,
        /// its dconf directories and a profile of the user database alone.
        func dconfEnvironment() throws -> [String: String] {
            let profile = root.appendingPathComponent("dconf-profile")
            try "user-db:user\n".write(to: profile, atomically: true, encoding: .utf8)
            return [
                "DBUS_SESSION_BUS_ADDRESS": fixture.bus.address, "DCONF_PROFILE": profile.path,
                "XDG_CONFIG_HOME": fixture.bus.directory.appendingPathComponent("config").path,
                "XDG_RUNTIME_DIR": fixture.runtimeDirectory.path,
            ]
        }

        /// What this machine's file in the folder says of each key of the editor domain:
        /// its latest entry's value (`.some(nil)`: removed); empty while there is no file.
        func published() -> [String: PropertyListValue?] {
            let file = folder.appendingPathComponent(RoamingFolder.fileName(for: identity))
            guard let bytes = try? [UInt8](Data(contentsOf: file)),
                let decoded = try? RoamingFile.decode(bytes, limits: .default, now: RoamingFolderTests.now, checkValue: { _, _ in })
            else { return [:] }
            var latest: [String: PropertyListValue?] = [:]
            for entry in decoded.entries where entry.key.domain.rawValue == RoamingFolderTests.editor {
                latest.updateValue(entry.value, forKey: entry.key.key)
            }
            return latest
        }

        /// Puts a file into the folder whole, as a sync engine does (written beside it, renamed in).
        func put(_ name: String, _ bytes: [UInt8]) throws {
            let temporary = root.appendingPathComponent(name + ".tmp")
            try Data(bytes).write(to: temporary)
            _ = rename(temporary.path, folder.appendingPathComponent(name).path)
        }

        /// Puts `machine`'s file into the folder, holding `values` of the editor domain dated `wall`.
        func put(_ machine: MachineID, _ values: [String: PropertyListValue], wall: UInt64, name: String) throws {
            let domain = try DomainName(RoamingFolderTests.editor)
            var clock = HybridClock()
            let entries = values.sorted { $0.key < $1.key }.map { key, value in
                RoamingEntry(key: RoamingKey(domain, key), value: value, stamp: RoamingStamp(time: clock.tick(physical: wall), machine: machine))
            }
            try put(RoamingFolder.fileName(for: machine), RoamingFile(machine: machine, name: name, entries: entries).encoded())
        }
    }

    static var now: UInt64 { UInt64(Date().timeIntervalSince1970 * 1000) }

    /// The `File`s the status lists as set aside, with their reasons.
    static func setAside(_ status: [String: PropertyListValue]) -> [String: String] {
        guard case .array(let items)? = status["SetAside"] else { return [:] }
        var result: [String: String] = [:]
        for case .dictionary(let entry) in items {
            if case .string(let file)? = entry["File"], case .string(let reason)? = entry["Reason"] { result[file] = reason }
        }
        return result
    }

    @Test("this machine's file replaced while prefsd is down by one dated year 9999: refused and shown, written anew, and another machine's later change wins")
    func ownFileFromTheFuture() async throws {
        let machine = try await Machine()
        defer { try? FileManager.default.removeItem(at: machine.root) }
        try await machine.client.write(Self.editor, "FontSize", .integer(14))
        #expect(await eventually { await machine.status()["Published"] == .integer(1) })
        #expect(machine.fixture.stopService() == 0)

        try machine.put(machine.identity, ["FontSize": .integer(99)], wall: 253_402_300_799_000, name: "mallory")
        try await machine.fixture.startService(arguments: machine.arguments)
        let ownName = RoamingFolder.fileName(for: machine.identity)
        let shown = await eventually { Self.setAside(await machine.status())[ownName]?.contains("ahead of this machine's clock") == true }
        let status = await machine.status()
        #expect(shown, "\(status)")
        #expect(await machine.value("FontSize") == .integer(14))
        // Written anew: the file in the folder now passes the checks another machine makes.
        let rewritten = await eventually {
            guard let bytes = try? [UInt8](Data(contentsOf: machine.folder.appendingPathComponent(ownName))) else { return false }
            return (try? RoamingFile.decode(bytes, limits: .default, now: Self.now, checkValue: { _, _ in })) != nil
        }
        #expect(rewritten)

        try machine.put(MachineID(derivedFrom: "another machine"), ["FontSize": .integer(12)], wall: Self.now, name: "desktop")
        #expect(await eventually { await machine.value("FontSize") == .integer(12) }, "\(machine.fixture.log)")
    }

    @Test("another machine's change reaches dconf's file and its clients' Notify on a machine serving dconf")
    func reachesDconf() async throws {
        let machine = try await Machine(extra: ["--dconf"])
        defer { try? FileManager.default.removeItem(at: machine.root) }
        let fixture = machine.fixture
        #expect(await eventually { fixture.bus.processID(owning: "ca.desrt.dconf") == fixture.pid }, "\(fixture.log)")
        // A dconf client's view: Notify on the bus, and the file read by Debian's dconf.
        let listener = try fixture.connect()
        defer { listener.close() }
        let notified = Mutex<[String]>([])
        listener.setSignalHandler { message in
            guard message.member == "Notify", case .string(let prefix)? = message.body.first else { return }
            notified.withLock { $0.append(prefix) }
        }
        try await listener.addMatch("type='signal',interface='ca.desrt.dconf.Writer'")
        let dconf = try machine.dconfEnvironment()

        try machine.put(MachineID(derivedFrom: "another machine"), ["FontSize": .integer(12)], wall: Self.now, name: "desktop")
        #expect(await eventually { await machine.value("FontSize") == .integer(12) }, "\(fixture.log)")
        let key = "/com/example/Editor/FontSize"
        #expect(await eventually { notified.withLock { $0 }.contains(key) }, "Notify: \(notified.withLock { $0 })")
        let read = try runCommand("dconf", ["read", key], environment: dconf)
        #expect(read.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "int64 12", "dconf read: \(read.stdout)\(read.stderr)")
    }

    @Test("64 empty files named to sort first push no machine out: another machine's change is applied, and the next one after they leave")
    func squatters() async throws {
        let machine = try await Machine()
        defer { try? FileManager.default.removeItem(at: machine.root) }
        for n in 1...64 {
            let digits = String(n, radix: 16)
            try machine.put(String(repeating: "0", count: 32 - digits.count) + digits + RoamingFolder.suffix, [])
        }
        let other = MachineID(derivedFrom: "another machine")
        try machine.put(other, ["FontSize": .integer(12)], wall: Self.now, name: "desktop")
        let applied = await eventually { await machine.value("FontSize") == .integer(12) }
        let status = await machine.status()
        #expect(applied, "\(status)")
        for n in 1...64 {
            let digits = String(n, radix: 16)
            try FileManager.default.removeItem(
                at: machine.folder.appendingPathComponent(String(repeating: "0", count: 32 - digits.count) + digits + RoamingFolder.suffix))
        }
        try machine.put(other, ["FontSize": .integer(13)], wall: Self.now, name: "desktop")
        let appliedAfter = await eventually { await machine.value("FontSize") == .integer(13) }
        let statusAfter = await machine.status()
        #expect(appliedAfter, "\(statusAfter)")
        // The status follows at the end of the pass.
        #expect(await eventually { Self.setAside(await machine.status()).isEmpty })
    }

    @Test("a later change of another machine read right after one was applied wins: the applied one is not taken for this machine's")
    func appliedIsNotChangedHere() async throws {
        // Each commit of another machine's changes is held 1 s after it is made, so the
        // next change arrives while the pass that applied the first has not ended.
        let machine = try await Machine(extra: ["--roaming-apply-delay", "1000"])
        defer { try? FileManager.default.removeItem(at: machine.root) }
        let other = MachineID(derivedFrom: "another machine")
        try machine.put(other, ["FontSize": .integer(12)], wall: Self.now, name: "desktop")
        #expect(await eventually { await machine.value("FontSize") == .integer(12) })
        try machine.put(other, ["FontSize": .integer(13)], wall: Self.now, name: "desktop")
        let applied = await eventually { await machine.value("FontSize") == .integer(13) }
        let status = await machine.status()
        #expect(applied, "\(status)")
        #expect(status["Published"] == .integer(0))
    }
}
