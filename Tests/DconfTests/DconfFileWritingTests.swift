import Dconf
import Foundation
import PrefsdTestSupport
import Testing

/// dconf's database file as prefsd writes it, with hostile files beside it and a disk that
/// refuses it: nothing placed at the names prefsd writes can hang it or redirect its writes,
/// and a `Change` is answered only once dconf's file holds it, or refused with nothing
/// changed.
@Suite("prefsd writing dconf's file: hostile neighbours and a file that cannot be written", .serialized)
struct DconfFileWritingTests {
    @Test("a FIFO at user.prefsd-new while prefsd runs: dconf write and Init are answered, SIGTERM stops prefsd, the FIFO is left alone")
    func fifoAtTemporaryName() async throws {
        let server = try await DconfServer()
        #expect(try server.dconf(["write", "/org/example/app/size", "1"]).status == 0)
        let fifo = server.databaseFile.path + ".prefsd-new"
        guard mkfifo(fifo, 0o600) == 0 else { throw FixtureError("mkfifo \(fifo): \(String(cString: strerror(errno)))") }
        // Bounded: a prefsd that opened the FIFO would wait for a reader for ever.
        let written = try runCommand("dconf", ["write", "/org/example/app/size", "2"], environment: server.environment, timeout: .seconds(10))
        #expect(written.status == 0, "dconf write with a FIFO at the temporary name: \(written.stderr)")
        #expect(try server.read("/org/example/app/size") == "2")
        let initialised = try callInit(server)
        #expect(initialised.status == 0, "Init with a FIFO at the temporary name: \(initialised.stderr)")
        #expect(server.service.stopService() == 0, "prefsd did not exit 0 within 20 s of SIGTERM: \(server.service.log.suffix(2000))")
        var info = stat()
        #expect(lstat(fifo, &info) == 0 && info.st_mode & S_IFMT == S_IFIFO, "the FIFO was replaced or removed")
    }

    @Test("a symlink at user.prefsd-new and at the invalidation file: the user's files they point to stay as they were; the refused one is named in the log")
    func symlinksBesideTheDatabase() async throws {
        let server = try await DconfServer()
        #expect(try server.dconf(["write", "/org/example/app/size", "1"]).status == 0)
        let notes = server.service.bus.directory.appendingPathComponent("notes.txt")
        let letter = server.service.bus.directory.appendingPathComponent("letter.txt")
        try "the user's own notes\n".write(to: notes, atomically: true, encoding: .utf8)
        try "a letter of the user\n".write(to: letter, atomically: true, encoding: .utf8)
        try FileManager.default.createSymbolicLink(atPath: server.databaseFile.path + ".prefsd-new", withDestinationPath: notes.path)
        let runtime = server.service.runtimeDirectory.appendingPathComponent("dconf")
        try FileManager.default.createDirectory(at: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let invalidation = runtime.appendingPathComponent("user")
        try? FileManager.default.removeItem(at: invalidation)
        try FileManager.default.createSymbolicLink(atPath: invalidation.path, withDestinationPath: letter.path)

        let written = try server.dconf(["write", "/org/example/app/size", "2"])
        #expect(written.status == 0, "\(written.stderr)")
        #expect(try server.read("/org/example/app/size") == "2")
        #expect(try [UInt8](Data(contentsOf: notes)) == Array("the user's own notes\n".utf8), "the link at user.prefsd-new was written through")
        // dconf's own client zeroes the second byte as it maps the file (it makes the file two
        // bytes long); prefsd would set the first to 1.
        var expected = Array("a letter of the user\n".utf8)
        expected[1] = 0
        #expect(try [UInt8](Data(contentsOf: letter)) == expected, "the link at the invalidation file was written through")
        var info = stat()
        #expect(lstat(server.databaseFile.path, &info) == 0 && info.st_mode & S_IFMT == S_IFREG, "dconf's file is not a regular file")
        let log = server.service.log
        #expect(log.contains(invalidation.path) && log.contains("is a symbolic link"), "the refused invalidation file is not named: \(log.suffix(2000))")
    }

    @Test(
        "dconf's file cannot be written (user a directory, then the dconf directory immutable): Change refused StorageFailed naming the file, nothing changes; prefs writes reach dconf's file once it can be, each spell logged once"
    )
    func fileThatCannotBeWritten() async throws {
        // At notice, the log tells the end of each spell of failures too.
        let server = try await DconfServer(arguments: ["--log-level", "notice"])
        let file = server.databaseFile
        #expect(try server.dconf(["write", "/org/example/app/size", "1"]).status == 0)

        // `user` a directory.
        let kept = server.service.bus.directory.appendingPathComponent("user-kept")
        try FileManager.default.moveItem(at: file, to: kept)
        try FileManager.default.createDirectory(at: file, withIntermediateDirectories: false)
        try expectRefused(server, ["write", "/org/example/app/size", "2"])
        try expectRefused(server, ["write", "/org/example/app/fresh", "5"])
        // Nothing changed, and nothing stayed staged: prefs reads what was there.
        #expect(try server.prefs("read", "org.example.app", "size").stdout == "1\n")
        #expect(try server.prefs("read", "org.example.app", "fresh").status == 1)
        try FileManager.default.removeItem(at: file)
        try FileManager.default.moveItem(at: kept, to: file)
        #expect(try server.dconf(["write", "/org/example/app/size", "3"]).status == 0)
        #expect(try server.read("/org/example/app/size") == "3")

        // The dconf directory immutable (chattr +i): nothing can be created in it.
        let directory = file.deletingLastPathComponent()
        let locked = try runCommand("chattr", ["+i", directory.path])
        guard locked.status == 0 else { throw FixtureError("chattr +i \(directory.path): \(locked.stderr)") }
        defer { _ = try? runCommand("chattr", ["-i", directory.path]) }
        try expectRefused(server, ["write", "/org/example/app/size", "4"])
        #expect(try server.prefs("read", "org.example.app", "size").stdout == "3\n")
        // prefsd's own interface takes the change; dconf's file holds it once it can be written.
        #expect(try server.prefs("write", "org.example.app", "native", "-int", "7").status == 0)
        #expect(try server.read("/org/example/app/native") == "", "dconf's file changed in an immutable directory")
        // Init, which asks for the file holding every change, is refused while it cannot.
        let initialised = try callInit(server)
        #expect(initialised.status != 0 && initialised.stderr.contains("Error.StorageFailed"), "Init: \(initialised.stdout)\(initialised.stderr)")
        #expect(try runCommand("chattr", ["-i", directory.path]).status == 0)
        let deadline = ContinuousClock.now + .seconds(15)
        while try server.read("/org/example/app/native") != "int64 7", ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
        }
        #expect(try server.read("/org/example/app/native") == "int64 7", "the prefs write never reached dconf's file")
        #expect(try server.read("/org/example/app/size") == "3")
        let log = server.service.log
        let spells = log.components(separatedBy: "dconf's database file cannot be written").count - 1
        let ends = log.components(separatedBy: "dconf's database file is written again").count - 1
        #expect(spells == 2 && ends == 2, "\(spells) failures and \(ends) recoveries logged, for two spells: \(log.suffix(3000))")
    }

    @Test("dconf's disk full: a Change is refused StorageFailed and nothing changes; with room again it succeeds")
    func fullDisk() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let disk = try SmallFileSystem(megabytes: 1, at: server.databaseFile.deletingLastPathComponent())
        try await server.startPrefsd()
        #expect(try server.dconf(["write", "/org/example/app/size", "1"]).status == 0)
        let filler = try disk.fill()
        let large = "'" + String(repeating: "x", count: 8000) + "'"
        try expectRefused(server, ["write", "/org/example/app/large", large])
        try expectRefused(server, ["write", "/org/example/app/size", "2"])
        #expect(try server.prefs("read", "org.example.app", "large").status == 1)
        #expect(try server.prefs("read", "org.example.app", "size").stdout == "1\n")
        #expect(try server.read("/org/example/app/size") == "1")
        try FileManager.default.removeItem(at: filler)
        #expect(try server.dconf(["write", "/org/example/app/large", large]).status == 0)
        #expect(try server.read("/org/example/app/large") == large)
        withExtendedLifetime(disk) {}
    }

    /// Calls dconf's `Init` with gdbus, bounded by 10 seconds.
    private func callInit(_ server: DconfServer) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand(
            "gdbus",
            [
                "call", "--session", "--dest", DconfBus.busName, "--object-path", DconfBus.writerPath(database: "user"),
                "--method", "\(DconfBus.writerInterface).\(DconfBus.initMethod)", "--timeout", "10",
            ],
            environment: server.environment, timeout: .seconds(15))
    }

    /// Expects `dconf ARGUMENTS` to fail with prefsd's `StorageFailed` naming dconf's file.
    private func expectRefused(_ server: DconfServer, _ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws {
        let result = try server.dconf(arguments)
        #expect(result.status != 0, "dconf \(arguments.joined(separator: " ")) was answered", sourceLocation: sourceLocation)
        #expect(
            result.stderr.contains("Error.StorageFailed") && result.stderr.contains(server.databaseFile.path),
            "dconf \(arguments.first ?? ""): \(result.stderr)", sourceLocation: sourceLocation)
    }
}
