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
    /// Counts the handler's calls of the watchers it starts.
    final class Calls: Sendable {
        private let count = Mutex(0)

        /// A watcher of `directory` counting its calls here.
        func watcher(of directory: URL) -> DirectoryWatcher {
            DirectoryWatcher(directory: directory, delay: .milliseconds(10)) { self.count.withLock { $0 += 1 } }
        }

        /// Does `action`, then waits until the handler is called; whether it was (false, and
        /// the error recorded, when the action failed).
        func called(by action: () throws -> Void) async -> Bool {
            let before = count.withLock { $0 }
            do {
                try action()
            } catch {
                Issue.record(error)
                return false
            }
            return await eventually(timeout: .seconds(10)) { self.count.withLock { $0 } > before }
        }
    }

    private let files = FileManager.default

    /// A new temporary directory, removed by `body`'s end.
    private func withTemporaryDirectory(_ body: (URL) async throws -> Void) async throws {
        let base = files.temporaryDirectory.appendingPathComponent("prefsd-watcher-\(UUID().uuidString)")
        try files.createDirectory(at: base, withIntermediateDirectories: true)
        defer { try? files.removeItem(at: base) }
        try await body(base)
    }

    /// Writes a managed file in `directory`.
    private func writeFile(in directory: URL) throws {
        try Data("a".utf8).write(to: directory.appendingPathComponent("com.example.plist"))
    }

    @Test("a directory missing two levels down is watched with inotify, seen when made, and its files after")
    func madeLater() async throws {
        try await withTemporaryDirectory { base in
            let directory = base.appendingPathComponent("etc/managed")
            let calls = Calls()
            let watcher = calls.watcher(of: directory)
            defer { watcher.cancel() }
            #expect(watcher.mode == .inotify)

            #expect(
                await calls.called { try files.createDirectory(at: directory, withIntermediateDirectories: true) }, "making the directory called nothing")
            #expect(await calls.called { try writeFile(in: directory) }, "a file written in the new directory called nothing")
        }
    }

    @Test("the directory renamed away and another made in its place: the new one is followed")
    func replaced() async throws {
        try await withTemporaryDirectory { base in
            let directory = base.appendingPathComponent("managed")
            try files.createDirectory(at: directory, withIntermediateDirectories: true)
            let calls = Calls()
            let watcher = calls.watcher(of: directory)
            defer { watcher.cancel() }

            #expect(
                await calls.called { try files.moveItem(at: directory, to: base.appendingPathComponent("managed.old")) },
                "renaming the directory away called nothing")
            #expect(
                await calls.called { try files.createDirectory(at: directory, withIntermediateDirectories: true) },
                "making a directory in its place called nothing")
            #expect(await calls.called { try writeFile(in: directory) }, "a file written in the new directory called nothing")
        }
    }

    @Test("a directory above it replaced by one holding another directory at the path: that one is followed")
    func wayReplaced() async throws {
        try await withTemporaryDirectory { base in
            let directory = base.appendingPathComponent("prefsd/managed")
            try files.createDirectory(at: directory, withIntermediateDirectories: true)
            let calls = Calls()
            let watcher = calls.watcher(of: directory)
            defer { watcher.cancel() }

            // Made aside, then renamed in at once: the path names another directory.
            let aside = base.appendingPathComponent("prefsd.new")
            try files.createDirectory(at: aside.appendingPathComponent("managed"), withIntermediateDirectories: true)
            #expect(
                await calls.called {
                    try files.moveItem(at: base.appendingPathComponent("prefsd"), to: base.appendingPathComponent("prefsd.old"))
                    try files.moveItem(at: aside, to: base.appendingPathComponent("prefsd"))
                }, "replacing the directory above called nothing")
            #expect(await calls.called { try writeFile(in: directory) }, "a file written in the directory now at the path called nothing")
        }
    }

    @Test("ten watchers share one inotify instance, and one cancelled leaves the others following their directories")
    func shared() async throws {
        try await withTemporaryDirectory { base in
            let before = inotifyInstances()
            let directories = (0..<10).map { base.appendingPathComponent("d\($0)") }
            for directory in directories { try files.createDirectory(at: directory, withIntermediateDirectories: true) }
            let calls = Calls()
            let watchers = directories.map { calls.watcher(of: $0) }
            defer { for watcher in watchers { watcher.cancel() } }
            #expect(watchers.allSatisfy { $0.mode == .inotify })
            #expect(inotifyInstances() - before <= 1, "the watchers opened \(inotifyInstances() - before) inotify instances")

            // The cancelled one shared every directory above with the last one.
            watchers[0].cancel()
            let last = directories[9]
            #expect(await calls.called { try files.removeItem(at: last) }, "removing the last directory called nothing")
            #expect(await calls.called { try files.createDirectory(at: last, withIntermediateDirectories: true) }, "making it again called nothing")
            #expect(await calls.called { try writeFile(in: last) }, "a file written in it called nothing")
        }
    }

    /// The inotify instances this process holds open.
    private func inotifyInstances() -> Int {
        let descriptors = (try? files.contentsOfDirectory(atPath: "/proc/self/fd")) ?? []
        return descriptors.filter { (try? files.destinationOfSymbolicLink(atPath: "/proc/self/fd/\($0)")) == "anon_inode:inotify" }.count
    }
}
