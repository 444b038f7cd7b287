import Foundation
import Testing

@testable import PreferencesRoaming

/// What is found at the folder's names is never trusted: a FIFO is not waited on, a link
/// is not written through.
@Suite("The roaming folder's files")
struct RoamingFolderFilesTests {
    @Test("a FIFO at this machine's own file: the load is not held up; the file is refused and written anew", .timeLimit(.minutes(1)))
    func fifoAtOwnFile() throws {
        let folder = try FolderFixture()
        let machine = Fixture.machine(0)
        let own = folder.folder.directory.appendingPathComponent(RoamingFolder.fileName(for: machine))
        #expect(mkfifo(own.path, 0o600) == 0)
        var reader = folder.reader()
        let loaded = reader.load(machine: machine, name: "here", now: folder.now)
        #expect(loaded.rewriteOwn)
        let reasons = loaded.events.compactMap { event -> String? in
            if case .refused(let name, let refusal) = event, name.text == own.lastPathComponent { refusal.reason } else { nil }
        }
        #expect(reasons.count == 1 && reasons[0].contains("FIFO"), "\(loaded.events)")
        try folder.folder.writeOwn(RoamingFile(machine: machine, name: "here", entries: []).encoded(), machine: machine)
        var info = stat()
        #expect(lstat(own.path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG)
    }

    @Test("links planted where the folder's files are written aside are never written through")
    func linksNotFollowed() throws {
        let folder = try FolderFixture()
        let machine = Fixture.machine(0)
        let victim = folder.root.appendingPathComponent("victim")
        try Data("untouched".utf8).write(to: victim)
        // A link at each name a writer might pick in the local directory's tmp: the file's
        // name with this process's ID, with and without the temporary suffixes.
        let temporary = folder.folder.localDirectory.appendingPathComponent("tmp", isDirectory: true)
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let name = RoamingFolder.fileName(for: machine)
        for planted in ["\(name).\(getpid()).tmp", "\(name).tmp", "\(name).prefsd-new"] {
            try FileManager.default.createSymbolicLink(at: temporary.appendingPathComponent(planted), withDestinationURL: victim)
        }
        let bytes = RoamingFile(machine: machine, name: "here", entries: []).encoded()
        try folder.folder.writeOwn(bytes, machine: machine)
        #expect(try Data(contentsOf: victim) == Data("untouched".utf8))
        #expect(try folder.folder.read(name, limit: 1 << 20) == bytes)
    }

    @Test("what a stopped writer left in the local tmp folder is removed at start: files and links, never opened; anything else is named and left")
    func staleTemporaries() throws {
        let folder = try FolderFixture()
        let temporary = folder.folder.temporaryDirectory
        try FileManager.default.createDirectory(at: temporary, withIntermediateDirectories: true)
        let name = RoamingFolder.fileName(for: Fixture.machine(0))
        let victim = folder.root.appendingPathComponent("victim")
        try Data("untouched".utf8).write(to: victim)
        try Data("half".utf8).write(to: temporary.appendingPathComponent(name + ".prefsd-new-1x2y"))
        try FileManager.default.createSymbolicLink(
            at: temporary.appendingPathComponent("adopted.prefsd-roaming.prefsd-new-3z"), withDestinationURL: victim)
        let fifo = temporary.appendingPathComponent(name + ".prefsd-new-4w")
        #expect(mkfifo(fifo.path, 0o600) == 0)
        let left = folder.folder.removeStaleTemporaries()
        #expect(left == ["\(fifo.path) (a FIFO)"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: temporary.path) == [fifo.lastPathComponent])
        #expect(try Data(contentsOf: victim) == Data("untouched".utf8))
    }
}
