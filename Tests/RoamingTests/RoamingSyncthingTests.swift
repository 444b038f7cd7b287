import DBus
import Foundation
import PreferencesModel
import PreferencesRoaming
import PrefsdTestSupport
import SyncthingTestSupport
import Testing

/// Roaming through real Syncthing instances on 127.0.0.1, each beside its own bus, store
/// and prefsd.
@Suite("Roaming through Syncthing", .serialized, .enabled(if: SyncthingCluster.isInstalled, "syncthing is not installed (scripts/install-dependencies)"))
struct RoamingSyncthingTests {
    @Test(
        "two machines: a write on A reaches B with Changed and the history's roaming:A; excluded keys and other domains stay; conflicts made while paused converge to the later one"
    )
    func twoMachines() async throws {
        let cluster = try await SyncthingCluster(count: 2)
        defer { cluster.stop() }
        let managed = try ServiceFixture.managedDirectory([RoamingMachine.editor: ["Locked": .string("admin")]])
        let defaults = try ServiceFixture.managedDirectory([RoamingMachine.editor: ["Accent": .string("system")]])
        defer {
            try? FileManager.default.removeItem(at: managed)
            try? FileManager.default.removeItem(at: defaults)
        }
        let a = try await RoamingMachine(cluster: cluster, index: 0, name: "alpha")
        let b = try await RoamingMachine(
            cluster: cluster, index: 1, name: "beta",
            extra: ["--managed-dir", managed.path, "--defaults-dir", defaults.path, "--allow-unowned-managed-dir"])
        let changes = try await ChangedCollector(connection: try b.fixture.connect(), domains: [RoamingMachine.editor])

        _ = try await a.client.call("SetVolatileDomain", [.string(RoamingMachine.editor), ServiceClient.values(["Volatile": .integer(1)])])
        try await a.client.write(RoamingMachine.editor, "Locked", .string("user"))
        try await a.client.write(RoamingMachine.editor, "WindowFrame", .string("0 0 800 600"))
        try await a.client.write("com.example.Local", "Only", .integer(1))
        try await a.client.write(RoamingMachine.editor, "FontSize", .integer(14))
        // B's administrator has a default for Accent: A's value is the user's, and replaces it.
        try await a.client.write(RoamingMachine.editor, "Accent", .string("blue"))
        let started = ContinuousClock.now
        try await a.client.write(RoamingMachine.editor, "Sentinel", .integer(1))
        try await b.waitFor("Sentinel", .integer(1))
        print("write on A to its value on B: \(ContinuousClock.now - started)")
        #expect(await b.value("FontSize") == .integer(14))
        #expect(await b.value("Accent") == .string("blue"))
        #expect(await b.value("WindowFrame") == nil)
        #expect(try await b.client.domains().contains("com.example.Local") == false)
        #expect(await eventually(timeout: .seconds(10)) { changes.signals.contains { $0.changed["FontSize"] == .integer(14) } })
        #expect(try await b.client.volatileDomains().contains(RoamingMachine.editor) == false)
        let history = try b.history()
        #expect(history.contains { $0["key"] as? String == "FontSize" && $0["who"] as? String == "roaming:alpha" })
        // The key B's administrator forces is left alone: read as forced, never written under it.
        #expect(await b.value("Locked") == .string("admin"))
        #expect(!history.contains { $0["key"] as? String == "Locked" })
        #expect(try cluster.socketsOnLoopbackOnly())

        // Conflicting writes while A's link is paused: the later one (by HLC) wins everywhere.
        try await a.client.write(RoamingMachine.editor, "Doomed", .integer(1))
        try await b.waitFor("Doomed", .integer(1))
        try cluster.setPaused(0, true)
        try await a.client.write(RoamingMachine.editor, "Theme", .string("light"))
        try await b.client.write(RoamingMachine.editor, "Theme", .string("dark"))
        _ = try await a.client.call("Remove", [.string(RoamingMachine.editor), .string("Doomed")])
        try await a.client.write(RoamingMachine.editor, "Size", .integer(3))
        _ = try await b.client.call("Remove", [.string(RoamingMachine.editor), .string("Size")])
        try await b.client.write(RoamingMachine.editor, "Size", .integer(4))
        _ = try await b.client.call("Remove", [.string(RoamingMachine.editor), .string("Size")])
        try cluster.setPaused(0, false)
        try await a.waitFor("Theme", .string("dark"))
        try await b.waitFor("Theme", .string("dark"))
        try await b.waitFor("Doomed", nil)
        // B's removal came after A's write: removed on both.
        try await a.waitFor("Size", nil)
        // Nothing flaps back: a sentinel written after converges too, and Theme still holds.
        try await b.client.write(RoamingMachine.editor, "Sentinel", .integer(2))
        try await a.waitFor("Sentinel", .integer(2))
        #expect(await a.value("Theme") == .string("dark"))
        #expect(await a.value("Doomed") == nil)
    }

    @Test("three machines, one clock a day ahead: a write made after seeing its change still wins")
    func clockAhead() async throws {
        let cluster = try await SyncthingCluster(count: 3)
        defer { cluster.stop() }
        let a = try await RoamingMachine(cluster: cluster, index: 0, name: "alpha")
        let b = try await RoamingMachine(cluster: cluster, index: 1, name: "beta")
        let c = try await RoamingMachine(cluster: cluster, index: 2, name: "gamma", extra: ["--roaming-clock-offset", "86400000"])
        try await c.client.write(RoamingMachine.editor, "FontSize", .integer(20))
        try await a.waitFor("FontSize", .integer(20))
        try await b.waitFor("FontSize", .integer(20))
        try await a.client.write(RoamingMachine.editor, "FontSize", .integer(12))
        try await b.waitFor("FontSize", .integer(12))
        try await c.waitFor("FontSize", .integer(12))
        #expect(await a.value("FontSize") == .integer(12))
    }

    @Test("a corrupt file and hostile ones are set aside and reported; everything else keeps syncing")
    func hostileFiles() async throws {
        let cluster = try await SyncthingCluster(count: 2)
        defer { cluster.stop() }
        let a = try await RoamingMachine(cluster: cluster, index: 0, name: "alpha")
        let b = try await RoamingMachine(cluster: cluster, index: 1, name: "beta")
        try await a.client.write(RoamingMachine.editor, "Before", .integer(1))
        try await b.waitFor("Before", .integer(1))
        let folder = cluster.instances[0].folder
        let corrupt = String(repeating: "1", count: 32) + ".prefsd-roaming"
        let oversized = String(repeating: "2", count: 32) + ".prefsd-roaming"
        let misnamed = "not-a-machine.prefsd-roaming"
        try Data("PRFSROAM but then garbage".utf8).write(to: folder.appendingPathComponent(corrupt))
        try Data(count: 17 << 20).write(to: folder.appendingPathComponent(oversized))
        try Data("x".utf8).write(to: folder.appendingPathComponent(misnamed))
        // Well-formed files of made-up machines, hostile inside: a value nested 40 deep (the
        // bus allows 32), a key that is not valid (NUL), and a good key beside each: neither
        // file may be applied in part.
        var deep = PropertyListValue.integer(1)
        for _ in 0..<40 { deep = .array([deep]) }
        let deepFile = try hostileFile(["Deep": deep, "GoodBesideDeep": .integer(1)])
        let badKeyFile = try hostileFile(["Bad\u{0}Key": .integer(1), "GoodBesideBad": .integer(1)])
        for (name, bytes) in [deepFile, badKeyFile] {
            let temporary = cluster.instances[0].home.appendingPathComponent(name + ".tmp")
            try Data(bytes).write(to: temporary)
            try FileManager.default.moveItem(at: temporary, to: folder.appendingPathComponent(name))
        }
        try await a.client.write(RoamingMachine.editor, "After", .integer(2))
        try await b.waitFor("After", .integer(2))
        for machine in [a, b] {
            let reported = await eventually(timeout: .seconds(60)) {
                guard case .array(let items)? = try? await machine.status()["SetAside"] else { return false }
                let files = Set(
                    items.compactMap { item -> String? in
                        if case .dictionary(let entry) = item, case .string(let file)? = entry["File"] { return file }
                        return nil
                    })
                return files.isSuperset(of: [corrupt, oversized, misnamed, deepFile.name, badKeyFile.name])
            }
            let shown = try? await machine.status()["SetAside"]
            #expect(reported, "\(machine.name): \(String(describing: shown))")
            #expect(machine.fixture.isRunning)
        }
        #expect(await b.value("Before") == .integer(1))
        for machine in [a, b] {
            #expect(await machine.value("GoodBesideDeep") == nil)
            #expect(await machine.value("GoodBesideBad") == nil)
        }
    }

    /// A roaming file of a made-up machine holding `values` in the editor domain.
    private func hostileFile(_ values: [String: PropertyListValue]) throws -> (name: String, bytes: [UInt8]) {
        let machine = MachineID(derivedFrom: UUID().uuidString)
        let domain = try DomainName(RoamingMachine.editor)
        var clock = HybridClock()
        let wall = UInt64(Date().timeIntervalSince1970 * 1000)
        let entries = values.sorted { $0.key < $1.key }.map { key, value in
            RoamingEntry(key: RoamingKey(domain, key), value: value, stamp: RoamingStamp(time: clock.tick(physical: wall), machine: machine))
        }
        return (RoamingFolder.fileName(for: machine), RoamingFile(machine: machine, name: "mallory", entries: entries).encoded())
    }

    @Test("kill -9 while applying: nothing half-applied, and applying again commits nothing more")
    func killDuringApply() async throws {
        let cluster = try await SyncthingCluster(count: 2)
        defer { cluster.stop() }
        let a = try await RoamingMachine(cluster: cluster, index: 0, name: "alpha")
        let b = try await RoamingMachine(cluster: cluster, index: 1, name: "beta", extra: ["--roaming-apply-delay", "3000"])
        let changes = try await ChangedCollector(connection: try b.fixture.connect(), domains: [RoamingMachine.editor])
        var batch: [String: PropertyListValue] = [:]
        for n in 0..<50 { batch["Key\(n)"] = .integer(Int64(n)) }
        _ = try await a.client.call("Apply", [.string(RoamingMachine.editor), ServiceClient.values(batch), .stringArray([])])
        // The commit is durable when Changed is sent; the adoption is saved 3 s later.
        let applied = await eventually(timeout: .seconds(60)) { !changes.signals.isEmpty }
        try #require(applied, "B never applied A's change\n\(b.fixture.log)")
        b.fixture.killService()
        // Killed between the commit and noting it: the adopted state was never written.
        let adopted = cluster.instances[1].home.appendingPathComponent("folder.local/adopted.prefsd-roaming")
        #expect(!FileManager.default.fileExists(atPath: adopted.path))
        #expect(changes.signals.count == 1)
        #expect(Set(changes.signals[0].changed.keys).union(changes.signals[0].invalidated) == Set(batch.keys))
        // Restarted without the pause: it plans again, finds the values there, and commits nothing.
        try await b.fixture.startService(arguments: Array(b.arguments.prefix(4)))
        try await a.client.write(RoamingMachine.editor, "Sentinel", .integer(1))
        try await b.waitFor("Sentinel", .integer(1))
        #expect(try await b.client.readDomain(RoamingMachine.editor).count == 51)
        let history = try b.history()
        let sequences = Set(history.filter { ($0["key"] as? String)?.hasPrefix("Key") == true }.compactMap { $0["sequence"] as? Int })
        #expect(sequences.count == 1, "the 50 keys were committed in \(sequences.count) changes")
        // And B took them as A's, not as changes of its own to publish.
        let published = await eventually(timeout: .seconds(10)) { (try? await b.status()["Published"]) == .integer(0) }
        let status = try? await b.status()
        #expect(published, "\(String(describing: status))")
    }
}
