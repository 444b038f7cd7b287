import Foundation
import Testing

@testable import PreferencesService

/// What the watcher's poller compares, second by second, when inotify cannot watch.
@Suite("A directory's fingerprint")
struct DirectoryWatcherTests {
    @Test("it names the entries in order, without . and .., and changes with each edit, addition and removal")
    func fingerprint() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-fingerprint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.path

        let empty = DirectoryWatcher.fingerprint(path)
        #expect(empty.count == 1, "the directory's own line only: \(empty)")

        try Data("a".utf8).write(to: directory.appendingPathComponent("b.plist"))
        try Data("a".utf8).write(to: directory.appendingPathComponent("a.plist"))
        let two = DirectoryWatcher.fingerprint(path)
        #expect(two.dropFirst().map { $0.split(separator: " ").first.map(String.init) } == ["a.plist", "b.plist"])
        #expect(two != empty)

        try Data("longer".utf8).write(to: directory.appendingPathComponent("a.plist"))
        let edited = DirectoryWatcher.fingerprint(path)
        #expect(edited != two)

        try FileManager.default.removeItem(at: directory.appendingPathComponent("b.plist"))
        let removed = DirectoryWatcher.fingerprint(path)
        #expect(removed.count == 2)
        #expect(removed != edited)

        #expect(DirectoryWatcher.fingerprint(path + "/missing").isEmpty)
    }
}
