import DBus
import Foundation
import GSettingsSnapshots
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// prefsd keeps a snapshot of each loaded domain under `$XDG_RUNTIME_DIR` that the module
/// reads, so a first read need not wait on the bus; it goes stale before any change to the
/// domain is acknowledged, and when the prefsd that wrote it is gone.
@Suite("GSettings backend: the first read answers from prefsd's snapshot, never a stale one", .serialized)
struct GSettingsSnapshotTests {
    static let schema = GSettingsFixture.schema
    static let domain = "org.example.Test"

    /// The snapshot file of the test schema's domain under `runtime`, once prefsd has
    /// written it (at most 30 s): prefsd writes it after a load of the domain.
    private func snapshotFile(in runtime: URL, bus: String? = nil) async throws -> URL {
        var file: URL?
        _ = await eventually(timeout: .seconds(30)) {
            file = snapshotFiles(in: runtime).first { bus == nil || $0.deletingLastPathComponent().lastPathComponent == bus }
            return file != nil
        }
        guard let file else { throw FixtureError("prefsd wrote no snapshot of \(Self.domain) under \(runtime.path)") }
        return file
    }

    /// Every snapshot file of the test schema's domain under `runtime` (one per bus).
    private func snapshotFiles(in runtime: URL) -> [URL] {
        let parent = runtime.appendingPathComponent("prefsd")
        let buses = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        return buses.sorted().map { parent.appendingPathComponent($0).appendingPathComponent(Self.domain) }
            .filter { FileManager.default.fileExists(atPath: $0.path) }
    }

    /// The flag byte of the snapshot open as `handle` (byte 8: 0 valid, 1 stale).
    private func flag(_ handle: FileHandle) throws -> UInt8 {
        try handle.seek(toOffset: 8)
        return try handle.read(upToCount: 1)?.first ?? 0xFF
    }

    /// `data` (a snapshot's bytes) with the header's checksum made to match its body, as
    /// prefsd writes it.
    private func withChecksum(_ data: Data) -> Data {
        guard data.count >= SnapshotLayout.headerSize else { return data }
        let checksum = data.withUnsafeBytes { SnapshotLayout.checksum(UnsafeRawBufferPointer(rebasing: $0[SnapshotLayout.headerSize...])) }
        var out = data
        let range = SnapshotLayout.checksumOffset..<SnapshotLayout.headerSize
        out.replaceSubrange(range, with: SnapshotLayout.header(checksum: checksum)[range])
        return out
    }

    /// Puts `data` at `file` as prefsd puts a snapshot (a new file, renamed into place) and
    /// holds the lock on it that a live prefsd holds, this process standing in for prefsd:
    /// until the returned handle is closed.
    private func place(_ data: Data, at file: URL) throws -> FileHandle {
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".forged-\(UUID().uuidString)")
        try data.write(to: temporary)
        let handle = try FileHandle(forReadingFrom: temporary)
        var lock = flock()
        lock.l_type = Int16(F_RDLCK)
        lock.l_whence = Int16(SEEK_SET)
        guard fcntl(handle.fileDescriptor, SnapshotLayout.setLockCommand, &lock) == 0, rename(temporary.path, file.path) == 0 else {
            try? handle.close()
            throw FixtureError("could not lock and place a forged snapshot at \(file.path): errno \(errno)")
        }
        return handle
    }

    /// Overwrites the start of `file` with `data` in place: the same file (prefsd's, with
    /// its lock and its flag), other bytes.
    private func overwrite(_ file: URL, with data: Data) throws {
        let handle = try FileHandle(forUpdating: file)
        defer { try? handle.close() }
        try handle.seek(toOffset: 0)
        try handle.write(contentsOf: data)
    }

    /// Waits until `program` has exited, or fails after 30 s.
    /// Stops prefsd (SIGSTOP, so the program's load cannot come), starts a PyGObject
    /// program that reads `text` of the test schema, runs `between` after that first read,
    /// lets the program read again, and returns what it printed (`first …`, `second …`)
    /// once it has ended, with the program.
    private func readTwiceWithPrefsdStopped(
        _ service: ServiceFixture, _ fixture: GSettingsFixture, between: () throws -> Void
    ) async throws -> (String, Process) {
        let pid = try #require(service.pid)
        kill(pid, SIGSTOP)
        defer { kill(pid, SIGCONT) }
        let go = fixture.directory.appendingPathComponent("read-again")
        let (program, output) = try fixture.startPython(
            """
            import os, time
            s = Gio.Settings.new('org.example.Test')
            print('first', s.get_string('text'), flush=True)
            deadline = time.monotonic() + 30
            while not os.path.exists(\(String(reflecting: go.path))) and time.monotonic() < deadline:
                time.sleep(0.01)
            print('second', s.get_string('text'), flush=True)
            """)
        defer {
            if program.isRunning { kill(program.processIdentifier, SIGKILL) }
            program.waitUntilExit()
        }
        try await waitFor("first ", in: output)
        try between()
        _ = FileManager.default.createFile(atPath: go.path, contents: nil)
        try await waitForExit(program)
        return (try String(contentsOf: output, encoding: .utf8), program)
    }

    private func waitForExit(_ program: Process) async throws {
        if await eventually(timeout: .seconds(30), { !program.isRunning }) { return }
        throw FixtureError("the program did not exit within 30 s")
    }

    /// Waits until prefsd's `Read` (one key, not a load: no new snapshot) answers `expected`.
    private func waitForRead(_ service: ServiceFixture, _ key: String, _ expected: DBusValue) async throws {
        let connection = try service.connect()
        defer { connection.close() }
        var last: [DBusValue] = []
        let answered = await eventually(timeout: .seconds(30)) {
            let reply = try? await connection.call(
                .methodCall(
                    destination: PreferencesBus.busName, path: PreferencesBus.objectPath, interface: PreferencesBus.interface,
                    member: "Read", body: [.string(Self.domain), .string(key)]))
            last = reply?.body ?? []
            return last == [.variant(expected)]
        }
        if answered { return }
        throw FixtureError("prefsd's Read of \(key) did not answer \(expected) within 30 s (last: \(last))")
    }

    /// Stores `text` = "stored" in the test domain of `service` and makes a GSettings fixture
    /// on it whose first `gsettings get` (checked) loads the domain, after which prefsd writes
    /// the snapshot: the proxy (the caller closes it), the fixture and the snapshot's file.
    private func storedAndSnapshotted(
        _ service: ServiceFixture
    ) async throws -> (proxy: PreferencesProxy, fixture: GSettingsFixture, snapshot: URL) {
        let proxy = PreferencesProxy(connection: try service.connect())
        try await proxy.write(Self.domain, "text", .string("stored"))
        let fixture = try GSettingsFixture(service: service)
        #expect(try fixture.gsettings("get", Self.schema, "text").stdout == "'stored'\n")
        return (proxy, fixture, try await snapshotFile(in: service.runtimeDirectory))
    }

    @Test("with prefsd stopped (SIGSTOP) once the snapshot exists, `gsettings get` still answers the stored value at once")
    func readsWithoutWaitingOnPrefsd() async throws {
        let service = try await ServiceFixture()
        // The first read loads the domain over the bus; prefsd then writes its snapshot.
        let (proxy, fixture, _) = try await storedAndSnapshotted(service)
        defer { proxy.close() }

        let pid = try #require(service.pid)
        kill(pid, SIGSTOP)
        let started = ContinuousClock.now
        let read = try fixture.gsettings("get", Self.schema, "text")
        let took = ContinuousClock.now - started
        let forced = try fixture.gsettings("get", Self.schema, "int32")
        kill(pid, SIGCONT)
        // A read that waited on the stopped prefsd would give up after 5 s with the schema's 'hello'.
        #expect(read.status == 0 && read.stdout == "'stored'\n", "gsettings get with prefsd stopped: \(read)")
        #expect(took < .seconds(4), "the read took \(took)")
        #expect(forced.stdout == "5\n", "a key the domain does not hold reads the schema default: \(forced)")
        // The sentinel: prefsd runs on and answers the same over the bus.
        #expect(try await proxy.read(Self.domain, "text") == .string("stored"))
    }

    @Test("a write acknowledged to `prefs` makes the snapshot a reader has open stale, and a fresh `gsettings get` reads the new value")
    func acknowledgedWriteIsSeen() async throws {
        let service = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        try await proxy.write(Self.domain, "text", .string("old"))
        let fixture = try GSettingsFixture(service: service)
        #expect(try fixture.gsettings("get", Self.schema, "text").stdout == "'old'\n")
        let file = try await snapshotFile(in: service.runtimeDirectory)
        // A reader that mapped the old snapshot (the same file, open here) sees the flip.
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        #expect(try flag(handle) == 0)

        let wrote = try service.prefs("write", Self.domain, "text", "new")
        #expect(wrote.status == 0, "prefs write: \(wrote)")
        #expect(try flag(handle) == 1, "the snapshot a reader maps was not stale once the write was acknowledged")
        let read = try fixture.gsettings("get", Self.schema, "text")
        #expect(read.stdout == "'new'\n", "a fresh process after the acknowledged write: \(read)")

        // And the same for a write by another GSettings program.
        _ = try await snapshotFile(in: service.runtimeDirectory)
        #expect(try fixture.gsettings("set", Self.schema, "text", "'newer'").status == 0)
        #expect(try fixture.gsettings("get", Self.schema, "text").stdout == "'newer'\n")
    }

    @Test("a reader whose load has not come checks the snapshot's flag on every read: flipped, it waits for prefsd")
    func readerChecksTheFlagOnEveryRead() async throws {
        let service = try await ServiceFixture()
        let (proxy, fixture, file) = try await storedAndSnapshotted(service)
        defer { proxy.close() }

        let (said, _) = try await readTwiceWithPrefsdStopped(service, fixture) {
            // prefsd's flip, as a change would make it (prefsd itself is stopped).
            let handle = try FileHandle(forUpdating: file)
            try handle.seek(toOffset: 8)
            try handle.write(contentsOf: [1])
            try handle.close()
        }
        // The second read waits for the load (at most the module's 5 s), then answers the
        // schema default: not the snapshot's value.
        #expect(said.contains("first stored\n"), "\(said)")
        #expect(said.contains("second hello\n"), "the stale snapshot answered: \(said)")
    }

    @Test("an administrator's new default and a new lock reach a fresh `gsettings get` at once (the snapshot goes stale)")
    func administratorChangesAreSeen() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        try files.keyfile("site", "00-site", "[org/example/Test]\nint32=42\nint64=int64 60\n")
        let service = try await ServiceFixture(arguments: files.arguments)
        let proxy = PreferencesProxy(connection: try service.connect())
        defer { proxy.close() }
        try await proxy.write(Self.domain, "int32", .integer(7))
        let fixture = try GSettingsFixture(service: service)
        #expect(try fixture.gsettings("get", Self.schema, "int64").stdout == "int64 60\n")
        _ = try await snapshotFile(in: service.runtimeDirectory)

        // A new default: read with `Read` (not a load, which would write a new snapshot).
        try files.keyfile("site", "00-site", "[org/example/Test]\nint32=42\nint64=int64 61\n")
        try await waitForRead(service, "int64", .int64(61))
        #expect(try fixture.gsettings("get", Self.schema, "int64").stdout == "int64 61\n")

        // A lock: the administrator's value replaces the user's 7.
        _ = try await snapshotFile(in: service.runtimeDirectory)
        #expect(try fixture.gsettings("get", Self.schema, "int32").stdout == "7\n")
        try files.locks("site", "00-site", "/org/example/Test/int32\n")
        try await waitForRead(service, "int32", .int64(42))
        #expect(try fixture.gsettings("get", Self.schema, "int32").stdout == "42\n")
    }

    @Test("a truncated, corrupted, stale, unlocked or another domain's snapshot is not read: the value comes over the bus")
    func damagedSnapshotFallsBack() async throws {
        let service = try await ServiceFixture()
        let (proxy, fixture, file) = try await storedAndSnapshotted(service)
        defer { proxy.close() }
        // A snapshot forged to say 'forged' (same length, its checksum made to match: still
        // well-formed), locked by this process as a live prefsd locks its own: read when
        // intact, so each damaged copy of it below that answered would be seen. Each is
        // written as a new file renamed into place, as prefsd writes; each but the damage
        // named has a matching checksum and is locked, so that damage alone is what is caught.
        let genuine = try Data(contentsOf: file)
        let stored = try #require(genuine.range(of: Data("stored".utf8)))
        var forged = genuine
        forged.replaceSubrange(stored, with: Data("forged".utf8))
        forged = withChecksum(forged)
        var held = try place(forged, at: file)
        defer { try? held.close() }
        let control = try fixture.gsettings("get", Self.schema, "text")
        #expect(control.stdout == "'forged'\n", "an intact forged snapshot is read (else this test proves nothing): \(control)")

        let header = SnapshotLayout.headerSize
        var damaged: [(String, Data)] = [
            ("truncated", withChecksum(forged.prefix(forged.count - 3))),
            ("header only", forged.prefix(header)),
            ("empty", Data()),
        ]
        var stale = forged
        stale[SnapshotLayout.flagOffset] = SnapshotLayout.stale
        damaged.append(("stale", stale))
        var garbage = forged
        for index in header..<min(forged.count, header + 12) { garbage[index] = 0xA5 }
        damaged.append(("garbage header of the message", withChecksum(garbage)))
        var wrongMagic = forged
        wrongMagic[0] = UInt8(ascii: "X")
        damaged.append(("wrong magic", wrongMagic))
        let name = try #require(forged.range(of: Data(Self.domain.utf8)))
        var otherDomain = forged
        otherDomain.replaceSubrange(name, with: Data("org.example.Tesu".utf8))
        damaged.append(("another domain's", withChecksum(otherDomain)))
        var changed = forged
        changed[stored.lowerBound] = UInt8(ascii: "F")
        damaged.append(("a byte changed, the checksum not", changed))
        for (name, data) in damaged {
            try held.close()
            held = try place(data, at: file)
            let read = try fixture.gsettings("get", Self.schema, "text")
            #expect(read.status == 0 && read.stdout == "'stored'\n", "\(name) snapshot: \(read)")
        }
        // Intact, but no process holds its lock: as a prefsd that died leaves it.
        try held.close()
        try forged.write(to: file, options: .atomic)
        let unlocked = try fixture.gsettings("get", Self.schema, "text")
        #expect(unlocked.status == 0 && unlocked.stdout == "'stored'\n", "unlocked snapshot: \(unlocked)")
    }

    @Test("a snapshot changed in place (one byte of a value, one of a key's name) is not read: its checksum no longer matches")
    func changedInPlaceFallsBack() async throws {
        let service = try await ServiceFixture()
        let (proxy, fixture, file) = try await storedAndSnapshotted(service)
        defer { proxy.close() }
        let genuine = try Data(contentsOf: file)
        let value = try #require(genuine.range(of: Data("stored".utf8)))
        let key = try #require(genuine.range(of: Data("text".utf8), in: SnapshotLayout.headerSize..<genuine.count))
        // Into prefsd's own file: its lock and its flag stay valid, only these bytes change.
        let changes = [("a byte of the value", value.lowerBound + 3, UInt8(ascii: "R")), ("a byte of the key's name", key.lowerBound + 3, UInt8(ascii: "u"))]
        for (name, offset, byte) in changes {
            var damaged = genuine
            damaged[offset] = byte
            try overwrite(file, with: damaged)
            let read = try fixture.gsettings("get", Self.schema, "text")
            #expect(read.status == 0 && read.stdout == "'stored'\n", "\(name) changed: \(read)")
        }
        // The control: a change whose checksum matches is read, so the reads above had the
        // snapshot (prefsd's, still valid) to answer from.
        var forged = genuine
        forged.replaceSubrange(value, with: Data("forged".utf8))
        try overwrite(file, with: withChecksum(forged))
        let control = try fixture.gsettings("get", Self.schema, "text")
        #expect(control.stdout == "'forged'\n", "a matching checksum is read (else this test proves nothing): \(control)")
    }

    @Test("a snapshot truncated in place while a program has it open and its load is pending does not kill the program")
    func truncatedInPlaceDoesNotKill() async throws {
        let service = try await ServiceFixture()
        let (proxy, fixture, file) = try await storedAndSnapshotted(service)
        defer { proxy.close() }

        // Cut to nothing in place: the file the program opened.
        let (said, program) = try await readTwiceWithPrefsdStopped(service, fixture) {
            let handle = try FileHandle(forUpdating: file)
            try handle.truncate(atOffset: 0)
            try handle.close()
        }
        #expect(
            program.terminationReason == .exit && program.terminationStatus == 0,
            "the program ended by \(program.terminationReason == .exit ? "exit" : "signal") \(program.terminationStatus): \(said)")
        #expect(said.contains("first stored\n"), "\(said)")
        // The second read waits for the load (at most the module's 5 s), then answers the
        // schema default.
        #expect(said.contains("second hello\n"), "\(said)")
    }

    /// How the prefsd that follows a killed one is started, in ``killedWritersSnapshotIsNotRead(_:)``.
    enum Successor: String, CaseIterable, CustomTestStringConvertible, Sendable {
        case withoutRuntimeDirectory = "without XDG_RUNTIME_DIR"
        case dotInPath = "on the bus address with /./ in its path"
        case pathThroughSymlink = "on the bus address with its path through a symbolic link"
        var testDescription: String { rawValue }
    }

    @Test(
        "after a kill -9 of the prefsd that wrote a snapshot, a write acknowledged by the next prefsd is what `gsettings get` reads",
        arguments: Successor.allCases)
    func killedWritersSnapshotIsNotRead(_ successor: Successor) async throws {
        let service = try await ServiceFixture()
        let (proxy, fixture, file) = try await storedAndSnapshotted(service)
        proxy.close()
        service.killService()
        #expect(FileManager.default.fileExists(atPath: file.path), "the killed prefsd's snapshot is left behind")

        switch successor {
        case .withoutRuntimeDirectory:
            try await service.startService(withoutRuntimeDirectory: true)
        case .dotInPath:
            try await service.startService(address: "unix:path=\(service.bus.directory.path)/./bus")
        case .pathThroughSymlink:
            let alias = service.bus.directory.appendingPathComponent("alias")
            try FileManager.default.createSymbolicLink(at: alias, withDestinationURL: service.bus.directory)
            try await service.startService(address: "unix:path=\(alias.path)/bus")
        }
        let wrote = try service.prefs("write", Self.domain, "text", "new")
        #expect(wrote.status == 0, "prefs write: \(wrote)")
        #expect(try service.prefs("read", Self.domain, "text").stdout == "new\n")
        let read = try fixture.gsettings("get", Self.schema, "text")
        #expect(read.status == 0 && read.stdout == "'new'\n", "the killed prefsd's snapshot answered: \(read)")
    }

    @Test("prefsd going away flips its snapshots stale and removes them; a new prefsd starts from none of them")
    func exitClearsSnapshots() async throws {
        let service = try await ServiceFixture()
        let proxy = PreferencesProxy(connection: try service.connect())
        try await proxy.write(Self.domain, "text", .string("stored"))
        proxy.close()
        let fixture = try GSettingsFixture(service: service)
        #expect(try fixture.gsettings("get", Self.schema, "text").stdout == "'stored'\n")
        let file = try await snapshotFile(in: service.runtimeDirectory)
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }

        #expect(service.stopService() == 0)
        #expect(try flag(handle) == 1, "a reader that mapped the snapshot of a prefsd that exited would go on reading it")
        #expect(!FileManager.default.fileExists(atPath: file.deletingLastPathComponent().path))
        try await service.startService()
        #expect(try fixture.gsettings("get", Self.schema, "text").stdout == "'stored'\n")
    }

    @Test("a restarted prefsd writes the snapshots its predecessor had before any load, and the first `gsettings get` reads one with prefsd stopped")
    func restartWritesSnapshotsAhead() async throws {
        let service = try await ServiceFixture()
        let (proxy, fixture, _) = try await storedAndSnapshotted(service)
        proxy.close()
        #expect(service.stopService() == 0)
        try await service.startService()
        // No program has loaded the domain from this prefsd: the snapshot comes by itself.
        let file = try await snapshotFile(in: service.runtimeDirectory)
        let handle = try FileHandle(forReadingFrom: file)
        defer { try? handle.close() }
        #expect(try flag(handle) == 0)
        let pid = try #require(service.pid)
        kill(pid, SIGSTOP)
        let read = try fixture.gsettings("get", Self.schema, "text")
        kill(pid, SIGCONT)
        // A read that waited on the stopped prefsd would give up after 5 s with the schema's 'hello'.
        #expect(read.status == 0 && read.stdout == "'stored'\n", "gsettings get with prefsd stopped: \(read)")
        // The sentinel: prefsd runs on and answers the same over the bus.
        let check = PreferencesProxy(connection: try service.connect())
        defer { check.close() }
        #expect(try await check.read(Self.domain, "text") == .string("stored"))
    }

    @Test("two prefsd on two private buses sharing one runtime directory never read each other's snapshots")
    func busesDoNotCross() async throws {
        let runtime = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-runtime-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: runtime) }
        let first = try await ServiceFixture(runtimeDirectory: runtime)
        let second = try await ServiceFixture(runtimeDirectory: runtime)
        for (service, value) in [(first, "on the first bus"), (second, "on the second bus")] {
            let proxy = PreferencesProxy(connection: try service.connect())
            try await proxy.write(Self.domain, "text", .string(value))
            proxy.close()
        }
        let fixtures = [try GSettingsFixture(service: first), try GSettingsFixture(service: second)]
        #expect(try fixtures[0].gsettings("get", Self.schema, "text").stdout == "'on the first bus'\n")
        #expect(try fixtures[1].gsettings("get", Self.schema, "text").stdout == "'on the second bus'\n")
        _ = await eventually(timeout: .seconds(30)) { snapshotFiles(in: runtime).count >= 2 }
        #expect(snapshotFiles(in: runtime).count == 2, "one snapshot directory per bus: \(snapshotFiles(in: runtime))")

        // Both stopped: each program answers from its own bus's snapshot.
        let pids = [try #require(first.pid), try #require(second.pid)]
        for pid in pids { kill(pid, SIGSTOP) }
        let reads = try fixtures.map { try $0.gsettings("get", Self.schema, "text") }
        for pid in pids { kill(pid, SIGCONT) }
        #expect(reads[0].stdout == "'on the first bus'\n", "\(reads[0])")
        #expect(reads[1].stdout == "'on the second bus'\n", "\(reads[1])")
    }
}
