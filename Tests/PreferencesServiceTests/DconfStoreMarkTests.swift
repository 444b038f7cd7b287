import Dconf
import Foundation
import Testing

@testable import PreferencesService

/// The store's identity that prefsd's mark in dconf's file names: made once, kept, and
/// made again only when what is there is not one.
@Suite("The store's identity for dconf's mark")
struct DconfStoreMarkTests {
    private func directory() throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-mark-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        return directory
    }

    @Test("made once (mode 0600) and read back the same; other text, a link or another user's file is replaced")
    func madeOnceAndKept() throws {
        let store = try directory()
        defer { try? FileManager.default.removeItem(at: store) }
        let path = store.appendingPathComponent(DconfStoreMark.fileName).path
        let first = DconfStoreMark.load(storeDirectory: store)
        #expect(first.problem == nil)
        let identity = try #require(first.mark.store)
        #expect(DconfMirror.Mark.isIdentity(identity))
        #expect((try FileManager.default.attributesOfItem(atPath: path))[.posixPermissions] as? Int == 0o600)
        #expect(DconfStoreMark.load(storeDirectory: store).mark == first.mark)

        for replace in ["text", "link", "other user"] {
            try? FileManager.default.removeItem(atPath: path)
            switch replace {
            case "text": try Data("not an identity\n".utf8).write(to: URL(fileURLWithPath: path))
            case "link":
                let elsewhere = store.appendingPathComponent("elsewhere")
                try Data((identity + "\n").utf8).write(to: elsewhere)
                try #require(symlink(elsewhere.path, path) == 0)
            default:
                try Data((identity + "\n").utf8).write(to: URL(fileURLWithPath: path))
                try #require(chown(path, 65534, 65534) == 0)
            }
            let made = DconfStoreMark.load(storeDirectory: store)
            #expect(made.problem == nil && made.mark.store != nil && made.mark != first.mark, "\(replace): \(made)")
            var info = stat()
            #expect(lstat(path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG && info.st_uid == getuid(), "\(replace)")
        }
    }
}
