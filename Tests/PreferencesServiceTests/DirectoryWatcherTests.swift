import Dispatch
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

/// The watcher on a path, with inotify: it wakes for what happens there and nothing else.
@Suite("Following a directory with inotify")
struct DirectoryWatcherInotifyTests {
    /// Counts the handler's calls and lets a test wait for the next one.
    private final class Calls: Sendable {
        private let arrived = DispatchSemaphore(value: 0)
        func handler() { arrived.signal() }
        /// Waits (at most 20 s) for a call.
        func next() -> Bool { arrived.wait(timeout: .now() + 20) == .success }
    }

    @Test("a directory that does not exist yet is followed with inotify, not polled, and seen once made, filled, moved away and made again")
    func missingDirectory() throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-watch-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        let parent = base.appendingPathComponent("prefsd")
        let directory = parent.appendingPathComponent("managed")
        let calls = Calls()
        let watcher = DirectoryWatcher(directory: directory, delay: .milliseconds(10)) { calls.handler() }
        defer { watcher.cancel() }
        #expect(watcher.mode == .inotify)

        // Made in two steps: the parent first (the ancestor's watch moves down), then itself.
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: false)
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        #expect(calls.next(), "the directory's making went unseen")
        try Data("a".utf8).write(to: directory.appendingPathComponent("com.example.plist"))
        #expect(calls.next(), "a file written in it went unseen")
        try FileManager.default.moveItem(at: directory, to: parent.appendingPathComponent("old"))
        #expect(calls.next(), "the directory moved away went unseen")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: false)
        #expect(calls.next(), "the directory made again went unseen")
        try Data("b".utf8).write(to: directory.appendingPathComponent("org.example.plist"))
        #expect(calls.next(), "a file written in the new directory went unseen")
    }
}
