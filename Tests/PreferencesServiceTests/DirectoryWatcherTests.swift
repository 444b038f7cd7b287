import BusTestSupport
import Foundation
import Synchronization
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

/// The watcher following its path with inotify: directories made, removed and replaced on
/// the way are seen when it happens, with nothing polled.
@Suite("A directory watcher following its path")
struct DirectoryWatcherPathTests {
    /// Counts the handler's calls.
    final class Calls: Sendable {
        private let count = Mutex(0)
        /// Adds one call.
        func add() { count.withLock { $0 += 1 } }
        /// The calls so far.
        var value: Int { count.withLock { $0 } }

        /// Waits until there are more calls than `before`; whether there were.
        func more(than before: Int) async -> Bool {
            await eventually(timeout: .seconds(10)) { self.value > before }
        }
    }

    /// A new temporary directory, removed by `body`'s end.
    private func withTemporaryDirectory(_ body: (URL) async throws -> Void) async throws {
        let base = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-watcher-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: base) }
        try await body(base)
    }

    @Test("a directory missing two levels down is watched with inotify, seen when made, and its files after")
    func madeLater() async throws {
        try await withTemporaryDirectory { base in
            let directory = base.appendingPathComponent("etc/managed")
            let calls = Calls()
            let watcher = DirectoryWatcher(directory: directory, delay: .milliseconds(10)) { calls.add() }
            defer { watcher.cancel() }
            #expect(watcher.mode == .inotify)

            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            #expect(await calls.more(than: 0), "making the directory called nothing")
            let made = calls.value
            try Data("a".utf8).write(to: directory.appendingPathComponent("com.example.plist"))
            #expect(await calls.more(than: made), "a file written in the new directory called nothing")
        }
    }

    @Test("the directory renamed away and another made in its place: the new one is followed")
    func replaced() async throws {
        try await withTemporaryDirectory { base in
            let directory = base.appendingPathComponent("managed")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let calls = Calls()
            let watcher = DirectoryWatcher(directory: directory, delay: .milliseconds(10)) { calls.add() }
            defer { watcher.cancel() }
            #expect(watcher.mode == .inotify)

            try FileManager.default.moveItem(at: directory, to: base.appendingPathComponent("managed.old"))
            #expect(await calls.more(than: 0), "renaming the directory away called nothing")
            let renamed = calls.value
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            #expect(await calls.more(than: renamed), "making a directory in its place called nothing")
            let made = calls.value
            try Data("a".utf8).write(to: directory.appendingPathComponent("com.example.plist"))
            #expect(await calls.more(than: made), "a file written in the new directory called nothing")
        }
    }

    @Test("a directory above it replaced by one holding another directory at the path: that one is followed")
    func wayReplaced() async throws {
        try await withTemporaryDirectory { base in
            let directory = base.appendingPathComponent("prefsd/managed")
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            let calls = Calls()
            let watcher = DirectoryWatcher(directory: directory, delay: .milliseconds(10)) { calls.add() }
            defer { watcher.cancel() }

            // Made aside, then renamed in at once: the path names another directory.
            let aside = base.appendingPathComponent("prefsd.new")
            try FileManager.default.createDirectory(at: aside.appendingPathComponent("managed"), withIntermediateDirectories: true)
            try FileManager.default.moveItem(at: base.appendingPathComponent("prefsd"), to: base.appendingPathComponent("prefsd.old"))
            try FileManager.default.moveItem(at: aside, to: base.appendingPathComponent("prefsd"))
            #expect(await calls.more(than: 0), "replacing the directory above called nothing")
            let replaced = calls.value
            try Data("a".utf8).write(to: directory.appendingPathComponent("com.example.plist"))
            #expect(await calls.more(than: replaced), "a file written in the directory now at the path called nothing")
        }
    }

    @Test("ten watchers share one inotify instance, and one cancelled leaves the others following their directories")
    func shared() async throws {
        try await withTemporaryDirectory { base in
            let before = inotifyInstances()
            let directories = (0..<10).map { base.appendingPathComponent("d\($0)") }
            for directory in directories { try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true) }
            let calls = Calls()
            let watchers = directories.map { DirectoryWatcher(directory: $0, delay: .milliseconds(10)) { calls.add() } }
            defer { for watcher in watchers { watcher.cancel() } }
            #expect(watchers.allSatisfy { $0.mode == .inotify })
            #expect(inotifyInstances() - before <= 1, "the watchers opened \(inotifyInstances() - before) inotify instances")

            // The cancelled one shared every directory above with the last one.
            watchers[0].cancel()
            let last = directories[9]
            try FileManager.default.removeItem(at: last)
            #expect(await calls.more(than: 0), "removing the last directory called nothing")
            let removed = calls.value
            try FileManager.default.createDirectory(at: last, withIntermediateDirectories: true)
            #expect(await calls.more(than: removed), "making the last directory again called nothing")
            let made = calls.value
            try Data("a".utf8).write(to: last.appendingPathComponent("com.example.plist"))
            #expect(await calls.more(than: made), "a file written in it called nothing")
        }
    }

    /// The inotify instances this process holds open.
    private func inotifyInstances() -> Int {
        let descriptors = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == "anon_inode:inotify" }.count
    }
}
