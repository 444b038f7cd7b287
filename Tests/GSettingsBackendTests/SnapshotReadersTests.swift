import Foundation
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// A snapshot a GSettings program maps goes stale with every change of its domain, whatever
/// made the change: a dconf client's `Change`, another machine's change through the roaming
/// folder, an undo and a restore, an administrator's managed file. (A write on prefsd's own
/// interface and the administrator's defaults and locks: `GSettingsSnapshotTests`.)
@Suite("GSettings backend: every source's change makes the snapshot stale", .serialized)
struct SnapshotReadersTests {
    static let schema = GSettingsFixture.schema
    static let domain = "org.example.Test"

    /// A snapshot of the test domain as a GSettings program maps it: the file prefsd wrote
    /// after `fixture`'s first `gsettings get` loaded the domain, held open.
    struct MappedSnapshot {
        let handle: FileHandle

        /// Waits (at most 30 s) until prefsd under `runtime` has written a valid snapshot (a
        /// stale one stays in place until the next is renamed over it), and opens it.
        init(in runtime: URL) async throws {
            let bus = runtime.appendingPathComponent("prefsd")
            var opened: FileHandle?
            _ = await eventually(timeout: .seconds(30)) {
                let buses = (try? FileManager.default.contentsOfDirectory(atPath: bus.path)) ?? []
                for name in buses {
                    let file = bus.appendingPathComponent(name).appendingPathComponent(SnapshotReadersTests.domain)
                    guard let handle = try? FileHandle(forReadingFrom: file) else { continue }
                    if (try? Self.isStale(handle)) == false {
                        opened = handle
                        return true
                    }
                    try? handle.close()
                }
                return false
            }
            guard let opened else { throw FixtureError("prefsd wrote no valid snapshot of \(SnapshotReadersTests.domain) under \(runtime.path)") }
            handle = opened
        }

        /// Whether the flag (byte 8) of the snapshot open as `handle` says stale, as a reader checks it.
        static func isStale(_ handle: FileHandle) throws -> Bool {
            try handle.seek(toOffset: 8)
            return try handle.read(upToCount: 1)?.first != 0
        }

        /// Whether the snapshot's flag says stale.
        var isStale: Bool {
            get throws { try Self.isStale(handle) }
        }
    }

    /// Stores `text` in the test domain, loads it with `gsettings get` (checked) and opens
    /// the snapshot prefsd writes after the load.
    private func mapped(_ text: String, service: ServiceFixture, settings: GSettingsFixture) async throws -> MappedSnapshot {
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        try await proxy.write(Self.domain, "text", .string(text))
        let read = try settings.gsettings("get", Self.schema, "text")
        #expect(read.stdout == "'\(text)'\n", "\(read)")
        return try await MappedSnapshot(in: service.runtimeDirectory)
    }

    /// Waits (at most 30 s) for the `Changed` of the test domain that sets `text` to `value`.
    private func changed(_ collector: ChangedCollector, to value: String) async -> Bool {
        await eventually(timeout: .seconds(30)) { collector.signals.contains { $0.changed["text"] == .string(value) } }
    }

    @Test("a dconf client's Change: stale once `dconf write` is answered; a fresh `gsettings get` reads the new value")
    func dconfChange() async throws {
        let served = try await DconfServedTests.Served()
        let snapshot = try await mapped("old", service: served.service, settings: served.settings)
        let written = try served.run("dconf", ["write", "/org/example/Test/text", "'new'"])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try snapshot.isStale, "the snapshot was not stale once the Change was answered")
        #expect(try served.settings.gsettings("get", Self.schema, "text").stdout == "'new'\n")
    }

    @Test("another machine's change through the roaming folder: stale once its Changed is sent; a fresh `gsettings get` reads it")
    func roamingPeer() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-snapshot-roam-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("roaming")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        /// A prefsd of one machine (`id`, 32 hex digits) roaming the test domain through `folder`.
        func machine(_ id: String) async throws -> ServiceFixture {
            let idFile = root.appendingPathComponent("machine-id-\(id)")
            try (id + "\n").write(to: idFile, atomically: true, encoding: .utf8)
            let service = try await ServiceFixture(arguments: ["--roaming-dir", folder.path, "--roaming-machine-id-file", idFile.path])
            let proxy = PreferencesProxy(connection: try service.connect())
            defer { proxy.close() }
            try await proxy.write("io.github.prefsd.Roaming", "Domains", .array([.string(Self.domain)]))
            return service
        }
        let here = try await machine(String(repeating: "a", count: 32))
        let settings = try GSettingsFixture(service: here)
        let snapshot = try await mapped("old", service: here, settings: settings)
        let collector = try await ChangedCollector(connection: try here.connect(), domains: [Self.domain])
        let elsewhere = try await machine(String(repeating: "b", count: 32))

        #expect(try elsewhere.prefs("write", Self.domain, "text", "new").status == 0)
        #expect(await changed(collector, to: "new"), "\(here.log)\n\(elsewhere.log)")
        #expect(try snapshot.isStale, "the snapshot was not stale once the roamed change's Changed was sent")
        #expect(try settings.gsettings("get", Self.schema, "text").stdout == "'new'\n")
    }

    @Test("an undo and a restore: stale once `prefs undo` and `prefs restore` are answered; a fresh `gsettings get` reads what they put back")
    func undoAndRestore() async throws {
        let service = try await ServiceFixture()
        let settings = try GSettingsFixture(service: service)
        #expect(try service.prefs("write", Self.domain, "text", "old").status == 0)
        let beforeUndo = try await mapped("new", service: service, settings: settings)
        let undone = try service.prefs("undo", Self.domain, "text")
        #expect(undone.status == 0, "\(undone)")
        #expect(try beforeUndo.isStale, "the snapshot was not stale once the undo was answered")
        #expect(try settings.gsettings("get", Self.schema, "text").stdout == "'old'\n")

        // That read loaded the domain again: prefsd writes a new snapshot.
        let beforeRestore = try await MappedSnapshot(in: service.runtimeDirectory)
        let restored = try service.prefs("restore", Self.domain, "--sequence", "0")
        #expect(restored.status == 0, "\(restored)")
        #expect(try beforeRestore.isStale, "the snapshot was not stale once the restore was answered")
        #expect(try settings.gsettings("get", Self.schema, "text").stdout == "'hello'\n", "the schema's default, as before every change")
    }

    @Test("a managed file forcing a key: stale once its Changed is sent; a fresh `gsettings get` reads the forced value")
    func managedDomain() async throws {
        let managed = try ServiceFixture.managedDirectory()
        defer { try? FileManager.default.removeItem(at: managed) }
        let service = try await ServiceFixture(arguments: ["--managed-dir", managed.path, "--allow-unowned-managed-dir"])
        let settings = try GSettingsFixture(service: service)
        let snapshot = try await mapped("user", service: service, settings: settings)
        let collector = try await ChangedCollector(connection: try service.connect(), domains: [Self.domain])

        try place(.dictionary(["text": .string("forced")]), domain: Self.domain, in: managed)
        #expect(await changed(collector, to: "forced"), "\(service.log)")
        #expect(try snapshot.isStale, "the snapshot was not stale once the managed change's Changed was sent")
        #expect(try settings.gsettings("get", Self.schema, "text").stdout == "'forced'\n")
    }
}
