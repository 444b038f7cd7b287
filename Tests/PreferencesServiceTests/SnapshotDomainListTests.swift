import Foundation
import Testing

@testable import PreferencesService

/// The list of domains whose snapshots a starting prefsd writes ahead: only a hint, so
/// whatever is wrong with it costs nothing but the snapshots.
@Suite("The snapshot domain list beside the store")
struct SnapshotDomainListTests {
    private func list() throws -> (SnapshotDomainList, URL) {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-list-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return (SnapshotDomainList(storeDirectory: directory), directory)
    }

    @Test("written and read back in order; no file reads as no domain")
    func roundTrip() throws {
        let (list, directory) = try list()
        defer { try? FileManager.default.removeItem(at: directory) }
        #expect(list.read(limit: 512).isEmpty)
        #expect(list.write(["org.gnome.desktop.interface", "org.example.app"]))
        #expect(list.read(limit: 512) == ["org.gnome.desktop.interface", "org.example.app"])
        #expect(list.read(limit: 1) == ["org.gnome.desktop.interface"])
        // Private, and made private again when opened up.
        let mode = { (try? FileManager.default.attributesOfItem(atPath: list.path))?[.posixPermissions] as? Int }
        #expect(mode() == 0o600)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: list.path)
        _ = list.read(limit: 512)
        #expect(mode() == 0o600)
    }

    @Test("lines that are not domain names are skipped; a file larger than any list is not read")
    func damaged() throws {
        let (list, directory) = try list()
        defer { try? FileManager.default.removeItem(at: directory) }
        try Data("org.example.app\n../../etc/passwd\n\u{0}bad\n.hidden\norg.example.other\n".utf8).write(to: URL(fileURLWithPath: list.path))
        #expect(list.read(limit: 512) == ["org.example.app", "org.example.other"])
        try Data(repeating: UInt8(ascii: "a"), count: 2 * 256 + 1).write(to: URL(fileURLWithPath: list.path))
        #expect(list.read(limit: 2).isEmpty)
    }
}
