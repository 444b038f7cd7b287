import Dconf
import Foundation
import PrefsdTestSupport
import Testing

/// prefsd serving dconf's name, used through Debian's `dconf` command: every value reads
/// back as written, changes through either interface reach the other at once, and
/// dconf-service takes the database back unchanged.
@Suite("prefsd as dconf-service, through the dconf command", .serialized)
struct DconfServiceTests {
    /// Values of many GVariant types, as `dconf write` takes them and `dconf read` prints them
    /// (GVariant's text with only the type annotations it needs).
    static let values: [(key: String, text: String)] = [
        ("/org/example/app/size", "42"),
        ("/org/example/app/name", "'hello'"),
        ("/org/example/app/idle", "uint32 600"),
        ("/org/example/app/big", "uint64 18446744073709551615"),
        ("/org/example/app/small", "int16 -3"),
        ("/org/example/app/byte", "byte 0xff"),
        ("/org/example/app/scale", "1.25"),
        ("/org/example/app/on", "true"),
        ("/org/example/app/list", "['a', 'b']"),
        ("/org/example/app/pairs", "[('xkb', 'us'), ('xkb', 'de')]"),
        ("/org/example/app/names", "{'k': 'v', 'a': 'b'}"),
        ("/org/example/app/dict", "{'z': <'s'>, 'a': <1>}"),
        ("/org/example/app/maybe", "@ms 'x'"),
        ("/org/example/app/when", "(nan,)"),
        ("/org/example/app/path", "objectpath '/org/example/x'"),
        ("/org/example/app/any", "<(1, 'two')>"),
        ("/org/example/app/at-text", "'@i 5'"),
        ("/org/example/deep/er/key", "int64 -9000000000"),
        ("/toplevel", "'root'"),
    ]

    @Test("dconf write, then dconf read: every value as written, and prefs reads the same key at once")
    func writeAndRead() async throws {
        let server = try await DconfServer()
        for (key, text) in Self.values {
            let written = try server.dconf(["write", key, text])
            #expect(written.status == 0, "dconf write \(key) \(text): \(written.stderr)")
        }
        for (key, text) in Self.values {
            let read = try server.read(key)
            #expect(read == text, "dconf read \(key): \(read)")
        }
        // The stored value, as the GSettings module stores it (an `i` as an integer).
        let size = try server.prefs("read", "org.example.app", "size")
        #expect(size.status == 0 && size.stdout == "42\n", "\(size.stdout)\(size.stderr)")
        let deep = try server.prefs("read", "org.example.deep", "er/key")
        #expect(deep.stdout == "-9000000000\n", "\(deep.stdout)\(deep.stderr)")
        let listed = try server.dconf(["list", "/org/example/"])
        #expect(listed.stdout == "app/\ndeep/\n", "\(listed.stdout)")
    }

    @Test("prefs write reaches dconf watch with a Notify, and dconf read after it reads the value")
    func nativeWriteReachesDconf() async throws {
        let server = try await DconfServer()
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        let seen = try WatchOutput(server)
        defer { seen.stop() }
        #expect(try seen.waitUntilSubscribed(server), "dconf watch never saw a change")

        // A write through prefsd's own interface reaches dconf's file off its answer's path;
        // its `Notify` comes once the file holds it.
        // A key dconf wrote keeps the type it was written with while the value fits it.
        let written = try server.prefs("write", "org.example.app", "size", "-int", "7")
        #expect(written.status == 0, "\(written.stderr)")
        #expect(seen.waitFor("/org/example/app/size\n  7", timeout: 10), "\(seen.text)")
        #expect(try server.read("/org/example/app/size") == "7", "the size keeps dconf's int32 type")
        // A key only prefs wrote has its value's natural type.
        #expect(try server.prefs("write", "org.example.app", "fresh", "-int", "5").status == 0)
        #expect(seen.waitFor("/org/example/app/fresh\n  int64 5", timeout: 10), "\(seen.text)")
        #expect(try server.read("/org/example/app/fresh") == "int64 5")
        #expect(try server.prefs("write", "org.example.app", "title", "-string", "x").status == 0)
        #expect(seen.waitFor("/org/example/app/title\n  'x'", timeout: 10), "\(seen.text)")
        #expect(try server.read("/org/example/app/title") == "'x'")
    }

    @Test("dconf reset, reset -f, dump and load")
    func resetDumpLoad() async throws {
        let server = try await DconfServer()
        let keyfile = """
            [org/example/app]
            a=1
            b=['x', 'y']
            c=(1, 'two')

            [org/example/app/sub]
            d=uint32 4

            """
        let loaded = try server.dconf(["load", "/"], input: keyfile)
        #expect(loaded.status == 0, "\(loaded.stderr)")
        #expect(try server.dconf(["dump", "/"]).stdout == keyfile)
        #expect(try server.dconf(["reset", "/org/example/app/a"]).status == 0)
        #expect(try server.read("/org/example/app/a") == "")
        #expect(try server.prefs("read", "org.example.app", "a").status != 0)
        #expect(try server.dconf(["reset", "-f", "/org/example/app/"]).status == 0)
        #expect(try server.dconf(["dump", "/"]).stdout == "")
        let domains = try server.prefs("domains")
        #expect(!domains.stdout.contains("org.example.app"), "\(domains.stdout)")
    }

    @Test("one Change resetting a directory and setting a key in it: the directory's other keys go, the key is set with its type")
    func resetAndSetInOneChange() async throws {
        let server = try await DconfServer()
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        #expect(try server.dconf(["write", "/org/example/app/name", "'x'"]).status == 0)
        let script = """
            import gi
            gi.require_version('Gio', '2.0')
            from gi.repository import Gio, GLib
            bus = Gio.bus_get_sync(Gio.BusType.SESSION, None)
            changeset = GLib.Variant('a{smv}', {'/org/example/app/': None, '/org/example/app/size': GLib.Variant('u', 7)})
            blob = GLib.Variant.new_from_bytes(GLib.VariantType('ay'), changeset.get_data_as_bytes(), True)
            reply = bus.call_sync('ca.desrt.dconf', '/ca/desrt/dconf/Writer/user', 'ca.desrt.dconf.Writer', 'Change',
                                  GLib.Variant.new_tuple(blob), GLib.VariantType('(s)'), 0, -1, None)
            print(reply.unpack()[0])
            """
        let changed = try runCommand("/usr/bin/python3", ["-c", script], environment: server.environment)
        #expect(changed.status == 0, "\(changed.stderr)")
        #expect(changed.stdout.contains(":user:"), "the reply is dconf's tag: \(changed.stdout)")
        #expect(try server.read("/org/example/app/size") == "uint32 7")
        #expect(try server.read("/org/example/app/name") == "")
    }

    @Test("a change that changes nothing rewrites nothing")
    func unchangedKeepsFile() async throws {
        let server = try await DconfServer()
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        let before = try FileManager.default.attributesOfItem(atPath: server.databaseFile.path)
        #expect(try server.prefs("write", "org.example.app", "size", "-int", "42").status == 0)
        // dconf's answer comes once the file holds every change before it: the sentinel.
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        let after = try FileManager.default.attributesOfItem(atPath: server.databaseFile.path)
        #expect(after[.systemFileNumber] as? UInt64 == before[.systemFileNumber] as? UInt64, "the file was replaced")
        #expect(after[.modificationDate] as? Date == before[.modificationDate] as? Date, "the file was rewritten")
        #expect(try server.dconf(["write", "/org/example/other/k", "1"]).status == 0)
        let changed = try FileManager.default.attributesOfItem(atPath: server.databaseFile.path)
        #expect(changed[.systemFileNumber] as? UInt64 != before[.systemFileNumber] as? UInt64, "a change replaces the file")
        #expect(try server.read("/org/example/app/size") == "42")
    }

    @Test("dconf-service takes the database back: every value as it was, exact to the GVariant bytes")
    func handBack() async throws {
        let server = try await DconfServer()
        for (key, text) in Self.values { #expect(try server.dconf(["write", key, text]).status == 0) }
        let underPrefsd = try server.dconf(["dump", "/"]).stdout
        let bytes = try server.databaseValues()
        #expect(server.service.stopService() == 0)
        // prefsd gone: the next call activates Debian's dconf-service on the same file.
        #expect(try server.dconf(["dump", "/"]).stdout == underPrefsd)
        #expect(try server.dconf(["write", "/org/example/app/after", "1"]).status == 0)
        var written = try server.databaseValues()
        #expect(written.removeValue(forKey: "/org/example/app/after") != nil)
        #expect(written == bytes, "dconf-service rewrote values differently")
    }

    @Test("a database dconf-service wrote is taken in whole at start, exact, and kept aside; a second start takes nothing")
    func takeIn() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        for (key, text) in Self.values {
            let written = try server.dconf(["write", key, text])
            #expect(written.status == 0, "dconf-service: \(written.stderr)")
        }
        let underDconf = try server.dconf(["dump", "/"]).stdout
        let original = try Data(contentsOf: server.databaseFile)
        let values = try server.databaseValues()
        server.stopDconfService()

        try await server.startPrefsd()
        #expect(try server.dconf(["dump", "/"]).stdout == underDconf)
        #expect(try server.databaseValues() == values)
        let aside = try FileManager.default.contentsOfDirectory(atPath: server.databaseFile.deletingLastPathComponent().path)
            .filter { $0.hasPrefix("user.taken-in-") }
        #expect(aside.count == 1, "\(aside)")
        if let name = aside.first {
            #expect(try Data(contentsOf: server.databaseFile.deletingLastPathComponent().appendingPathComponent(name)) == original)
        }
        let history = try server.prefs("history", "org.example.app")
        #expect(history.stdout.contains("dconf-service"), "\(history.stdout)")

        #expect(server.service.stopService() == 0)
        try await server.startPrefsd()
        let again = try FileManager.default.contentsOfDirectory(atPath: server.databaseFile.deletingLastPathComponent().path)
            .filter { $0.hasPrefix("user.taken-in-") }
        #expect(again.count == 1, "a second start took prefsd's own file in: \(again)")
        #expect(try server.dconf(["dump", "/"]).stdout == underDconf)
    }

    @Test("a damaged or missing database file is made again from the store at start; a damaged one is moved aside")
    func damagedFileRemade() async throws {
        let server = try await DconfServer()
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        #expect(server.service.stopService() == 0)
        // What a power cut can leave of a file renamed in before its data reached the disk.
        try Data().write(to: server.databaseFile)
        try await server.startPrefsd()
        #expect(try server.read("/org/example/app/size") == "42")
        let names = try FileManager.default.contentsOfDirectory(atPath: server.databaseFile.deletingLastPathComponent().path)
        #expect(names.contains { $0.hasPrefix("user.damaged-") }, "\(names)")
        #expect(!names.contains { $0.hasPrefix("user.taken-in-") }, "\(names)")

        #expect(server.service.stopService() == 0)
        try FileManager.default.removeItem(at: server.databaseFile)
        try await server.startPrefsd()
        #expect(try server.read("/org/example/app/size") == "42")
    }

    @Test("a key locked by a dconf system database is refused, and nothing of the change is written")
    func lockedKeyRefused() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let admin = server.service.administratorDirectory
        let database = admin.appendingPathComponent("db/site.d")
        try FileManager.default.createDirectory(at: database.appendingPathComponent("locks"), withIntermediateDirectories: true)
        try "[org/example/app]\nlocked=1\n".write(to: database.appendingPathComponent("00-site"), atomically: true, encoding: .utf8)
        try "/org/example/app/locked\n".write(to: database.appendingPathComponent("locks/site"), atomically: true, encoding: .utf8)
        try "user-db:user\nsystem-db:site\n".write(to: admin.appendingPathComponent("profile"), atomically: true, encoding: .utf8)
        try await server.startPrefsd(arguments: ["--allow-unowned-managed-dir"])
        let keyfile = "[org/example/app]\nfree=2\nlocked=3\n"
        let loaded = try server.dconf(["load", "/"], input: keyfile)
        #expect(loaded.status != 0)
        #expect(loaded.stderr.contains("locked by the administrator"), "\(loaded.stderr)")
        #expect(try server.read("/org/example/app/free") == "")
        #expect(try server.prefs("read", "org.example.app", "free").status != 0)
    }

    @Test("a dconf write is in prefs history as dconf's, undone by prefs undo (dconf read gives the old value, typed as before), and roams")
    func historyUndoAndRoaming() async throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-dconf-roam-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let folder = root.appendingPathComponent("roaming")
        let idFile = root.appendingPathComponent("machine-id")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        try "5f0e4f8b2c7d4e1a9b3c6d8e0f1a2b3c\n".write(to: idFile, atomically: true, encoding: .utf8)
        let server = try await DconfServer(arguments: ["--roaming-dir", folder.path, "--roaming-machine-id-file", idFile.path])
        #expect(try server.prefs("roaming", "enable", "org.example.app").status == 0)

        #expect(try server.dconf(["write", "/org/example/app/idle", "uint32 300"]).status == 0)
        #expect(try server.dconf(["write", "/org/example/app/idle", "uint32 600"]).status == 0)
        let history = try server.prefs("history", "org.example.app")
        #expect(history.stdout.split(separator: "\n").filter { $0.contains("dconf") }.count == 2, "\(history.stdout)")

        let undone = try server.prefs("undo", "org.example.app")
        #expect(undone.status == 0, "\(undone.stdout)\(undone.stderr)")
        #expect(try server.read("/org/example/app/idle") == "uint32 300")

        // The domain's changes, dconf's among them (they are all there is), are published for
        // the other machines (several changes close together may go out as one publication).
        var status = ""
        let roamed = await eventually(timeout: .seconds(20)) {
            status = (try? server.prefs("roaming", "status").stdout) ?? ""
            guard let match = status.firstMatch(of: /changes published: (\d+)/), let count = Int(match.1) else { return false }
            return count >= 1
        }
        #expect(roamed, "\(status)")
    }

    @Test("Blame tells the recent changes of dconf's keys from the history: a dconf write with its sender and PID, a prefs write with its program")
    func blame() async throws {
        let server = try await DconfServer()
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        #expect(try server.prefs("write", "org.example.app", "title", "-string", "x").status == 0)
        // A key the path rule does not map (GSettings would look for /org/example/hidden/key
        // in org.example.hidden): no dconf client sees it, Blame leaves it out.
        #expect(try server.prefs("write", "org.example", "hidden/key", "-int", "1").status == 0)
        let blame = try server.dconf(["blame"])
        #expect(blame.status == 0, "\(blame.stderr)")
        let records = blame.stdout.components(separatedBy: "\n====================================================================\n")
        try #require(records.count == 2, "\(blame.stdout)")
        let (written, native) = (records[0], records[1])
        for line in ["Object path: /ca/desrt/dconf/Writer/user", "Method: Change", "Program: dconf", "  /org/example/app/size = 42"] {
            #expect(written.contains(line), "\(line) in \(written)")
        }
        #expect(written.range(of: #"(?m)^Sender: :\d+\.\d+$"#, options: .regularExpression) != nil, "\(written)")
        #expect(written.range(of: #"(?m)^PID: [1-9]\d*$"#, options: .regularExpression) != nil, "\(written)")
        #expect(native.contains("Program: prefs"), "\(native)")
        #expect(native.contains("  /org/example/app/title = 'x'"), "\(native)")
        #expect(!native.contains("Sender:"), "\(native)")
        #expect(!blame.stdout.contains("hidden"), "\(blame.stdout)")
        // The history outlives prefsd: after a restart the changes are still told.
        #expect(server.service.stopService() == 0)
        try await server.startPrefsd()
        let again = try server.dconf(["blame"])
        #expect(again.stdout.contains("  /org/example/app/size = 42") && again.stdout.contains("Program: dconf"), "\(again.stdout)")
        // What the writer answers, as introspection tells it.
        let introspected = try runCommand(
            "gdbus", ["introspect", "--session", "--dest", "ca.desrt.dconf", "--object-path", "/ca/desrt/dconf/Writer/user"],
            environment: server.environment)
        #expect(introspected.status == 0, "\(introspected.stderr)")
        for name in ["ca.desrt.dconf.Writer", "Change(in  ay blob", "Notify(", "org.freedesktop.DBus.Properties", "org.freedesktop.DBus.Peer"] {
            #expect(introspected.stdout.contains(name), "\(name) in \(introspected.stdout)")
        }
    }
}

/// A running `dconf watch /`, its output going to a file that is read as it grows.
final class WatchOutput: Sendable {
    private let process: Process
    private let file: URL

    /// Starts `dconf watch /` for `server`'s clients.
    init(_ server: DconfServer) throws {
        file = server.service.bus.directory.appendingPathComponent("watch-\(UUID().uuidString)")
        _ = FileManager.default.createFile(atPath: file.path, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/bin/sh")
        process.arguments = ["-c", "exec dconf watch / > \"$0\" 2>&1 < /dev/null", file.path]
        process.environment = helperEnvironment.merging(server.environment) { $1 }
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        self.process = process
    }

    /// Ends the watch.
    func stop() {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    /// Everything printed so far.
    var text: String { (try? String(contentsOf: file, encoding: .utf8)) ?? "" }

    /// Waits until the watch is subscribed: it sees a change made after it started (dconf
    /// writes of `/org/example/probe`, tried until one shows). False if none shows.
    func waitUntilSubscribed(_ server: DconfServer) throws -> Bool {
        for attempt in 0..<200 {
            guard try server.dconf(["write", "/org/example/probe", "\(attempt)"]).status == 0 else { return false }
            if waitFor("/org/example/probe", timeout: 0.05) { return true }
        }
        return false
    }

    /// Waits until the output holds `expected`, at most `timeout` seconds.
    func waitFor(_ expected: String, timeout: Double) -> Bool {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            if text.contains(expected) { return true }
            usleep(5_000)
        }
        return text.contains(expected)
    }
}
