import Dconf
import Foundation
import GVDB
import PreferencesModel
import PreferencesProxy
import PrefsdTestSupport
import Testing

/// What prefsd finds where dconf's database should be, when it starts serving dconf: things
/// that are no database, a database with odd values, files carrying a mark that is not this
/// store's, and copies handed back that prefsd did not hand back. Each is met as Debian's
/// `dconf` command and dconf-service meet it.
@Suite("prefsd taking in what lies where dconf's database should be", .serialized)
struct DconfTakeInTests {
    /// What can lie at dconf's database path instead of a database.
    enum Placed: String, CaseIterable, CustomStringConvertible {
        case fifo, linkToDevice, directory, linkLoop, tooLarge

        var description: String { rawValue }

        /// Puts it at `path`.
        func place(at path: String) throws {
            switch self {
            case .fifo: try #require(mkfifo(path, 0o600) == 0)
            case .linkToDevice: try #require(symlink("/dev/zero", path) == 0)
            case .directory: try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
            case .linkLoop: try #require(symlink(path, path) == 0)
            case .tooLarge:
                // One byte over the store's limit (--max-store-size below), a real file of data.
                try Data(repeating: 0x47, count: DconfTakeInTests.storeLimit + 1).write(to: URL(fileURLWithPath: path))
            }
        }

        /// What prefsd's log says it was.
        var named: String {
            switch self {
            case .fifo: "not a regular file but a FIFO"
            case .linkToDevice: "not a regular file but a character device"
            case .directory: "not a regular file but a directory"
            case .linkLoop: "not a regular file but a symbolic link that loops"
            case .tooLarge: "it is \(DconfTakeInTests.storeLimit + 1) bytes, over the limit of \(DconfTakeInTests.storeLimit)"
            }
        }
    }

    /// The store limit prefsd runs with here (`--max-store-size`), the bound of what it reads.
    static let storeLimit = 4 << 20

    @Test(
        "a FIFO, a link to /dev/zero, a directory, a link loop or a file over the store's size where dconf's database should be: prefsd answers at once, moves it aside naming it, and serves dconf from the store",
        arguments: Placed.allCases)
    func notADatabase(_ placed: Placed) async throws {
        let server = try await DconfServer(arguments: ["--max-store-size", "\(Self.storeLimit)"])
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        #expect(server.service.stopService() == 0)
        let path = server.databaseFile.path
        try FileManager.default.removeItem(atPath: path)
        try placed.place(at: path)

        try await server.service.startService(arguments: ["--dconf", "--max-store-size", "\(Self.storeLimit)"])
        // prefsd's own interface answers (within the bus's 25 s), whatever lies there.
        let client = ServiceClient(connection: try server.service.connect())
        defer { client.connection.close() }
        let answered = try? await client.readValue("org.example.app", "size")
        guard answered == .integer(42) else {
            Issue.record("prefsd did not answer Read with 42 (\(String(describing: answered))); its log: \(server.service.log.suffix(2000))")
            server.service.killService()
            return
        }
        try await server.waitUntilServingDconf()
        #expect(try server.read("/org/example/app/size") == "42")
        let log = server.service.log
        #expect(log.contains(path) && log.contains(placed.named), "\(log.suffix(3000))")
        let directory = server.databaseFile.deletingLastPathComponent().path
        let aside = try FileManager.default.contentsOfDirectory(atPath: directory).filter { $0.hasPrefix("user.damaged-") }
        #expect(aside.count == 1, "\(aside)")
        // SIGTERM is heard: prefsd exits 0.
        #expect(server.service.stopService() == 0)
    }

    @Test(
        "a database with a value of no valid type, a key not in normal form C and a value of another type than its schema's: prefsd takes in what dconf reads, names the key it cannot store, and keeps the file"
    )
    func oddValues() async throws {
        let server = try await DconfServer(startingPrefsd: false)
        let keyfile = """
            [org/example/app]
            cafe\u{301}=1
            good='hello'
            odd='zzzz'
            size=42

            [org/gnome/desktop/interface]
            cursor-size='large'

            """
        #expect(try server.dconf(["load", "/"], input: keyfile).status == 0)
        server.stopDconfService()
        // The type string of 'zzzz' (its bytes, a zero, the zero of the variant, then `s`)
        // made one that names no type: dconf reads the value as ().
        var bytes = [UInt8](try Data(contentsOf: server.databaseFile))
        let stored = Array("zzzz".utf8) + [0, 0, UInt8(ascii: "s")]
        let at = try #require((0...(bytes.count - stored.count)).first { Array(bytes[$0..<$0 + stored.count]) == stored })
        bytes[at + stored.count - 1] = UInt8(ascii: "!")
        try Data(bytes).write(to: server.databaseFile)
        let underDconf = try server.dconf(["dump", "/"]).stdout
        #expect(underDconf.contains("odd=()\n") && underDconf.contains("cafe\u{301}=1\n"), "\(underDconf)")

        try await server.startPrefsd()
        let underPrefsd = try server.dconf(["dump", "/"]).stdout
        #expect(underPrefsd == underDconf.replacingOccurrences(of: "cafe\u{301}=1\n", with: ""), "\(underPrefsd)")
        #expect(try server.read("/org/gnome/desktop/interface/cursor-size") == "'large'")
        let log = server.service.log
        #expect(log.contains("/org/example/app/cafe\u{301}") && log.contains("normal form C"), "\(log.suffix(3000))")
        let directory = server.databaseFile.deletingLastPathComponent()
        let kept = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix("user.taken-in-") }
        #expect(kept.count == 1, "\(kept)")
        if let name = kept.first {
            #expect([UInt8](try Data(contentsOf: directory.appendingPathComponent(name))) == bytes, "the copy kept is not the file as it was")
        }
        #expect(try !FileManager.default.contentsOfDirectory(atPath: directory.path).contains { $0.hasPrefix("user.damaged-") })
    }

    @Test(
        "a file carrying prefsd's mark without this store's identity, and one carrying another store's: the first is kept aside before it is made again from the store, the second is taken in"
    )
    func foreignMarks() async throws {
        let server = try await DconfServer()
        #expect(try server.dconf(["write", "/org/example/app/size", "42"]).status == 0)
        #expect(server.service.stopService() == 0)
        let directory = server.databaseFile.deletingLastPathComponent()
        func names(_ prefix: String) throws -> [String] {
            try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasPrefix(prefix) }
        }
        let other = try #require(DconfValue(storedValue: .string("elsewhere"), type: "s"))

        // The mark's name alone, as prefsd wrote it before marks named the store.
        let forged = try DconfMirror.file([
            "/org/example/app/size": try #require(DconfValue(storedValue: .integer(7), type: "i")), "/org/example/app/other": other,
        ])
        try Data(forged).write(to: server.databaseFile)
        try await server.startPrefsd()
        #expect(try server.read("/org/example/app/size") == "42")
        #expect(try server.read("/org/example/app/other") == "")
        let replaced = try names("user.replaced-")
        #expect(replaced.count == 1, "\(replaced)")
        if let name = replaced.first { #expect([UInt8](try Data(contentsOf: directory.appendingPathComponent(name))) == forged) }
        #expect(server.service.log.contains("holds values the store does not"), "\(server.service.log.suffix(2000))")
        #expect(server.service.stopService() == 0)

        // Another store's mirror (another machine's, a backup): taken in, as dconf-service's file.
        let otherStore = DconfMirror.Mark(store: "0123456789abcdef0123456789abcdef")
        let foreign = try DconfMirror.file(["/org/example/app/other": other], mark: otherStore)
        try Data(foreign).write(to: server.databaseFile)
        try await server.startPrefsd()
        #expect(try server.read("/org/example/app/other") == "'elsewhere'")
        #expect(try server.read("/org/example/app/size") == "42")
        #expect(try names("user.taken-in-").count == 1)

        // prefsd's own file, restarted: nothing kept aside, nothing taken in.
        #expect(server.service.stopService() == 0)
        let own = try Data(contentsOf: server.databaseFile)
        #expect(DconfMirror.Mark(inFile: [UInt8](own))?.store != nil)
        try await server.startPrefsd()
        #expect(try names("user.replaced-").count == 1 && names("user.taken-in-").count == 1)
        #expect(try Data(contentsOf: server.databaseFile) == own)
    }

    @Test(
        "a copy handed back that prefsd did not hand back (a forged one, a link to the real one, one of another user's) removes no key; the one it handed back removes the keys reset under dconf-service"
    )
    func handedBackCopies() async throws {
        let server = try await DconfServer()
        #expect(try server.dconf(["load", "/"], input: "[org/example/app]\nkept=1\nreset=2\n").status == 0)
        #expect(server.service.stopService() == 0)
        let files = DconfFiles(name: "user", environment: server.environment)
        // What prefs dconf-switch-back hands back: a copy of prefsd's file.
        let genuine = try Data(contentsOf: server.databaseFile)
        let elsewhere = server.service.bus.directory.appendingPathComponent("handed-back-elsewhere")
        try genuine.write(to: elsewhere)

        enum Copy: CaseIterable { case forged, link, otherUser, genuine }
        for copy in Copy.allCases {
            // Under dconf-service, the user resets a key.
            #expect(try server.dconf(["reset", "/org/example/app/reset"]).status == 0)
            server.stopDconfService()
            try? FileManager.default.removeItem(atPath: files.handedBackPath)
            switch copy {
            case .forged:
                let values = try DconfMirror.values(inFile: [UInt8](genuine))
                try Data(try DconfMirror.file(values)).write(to: URL(fileURLWithPath: files.handedBackPath))
            case .link:
                try #require(symlink(elsewhere.path, files.handedBackPath) == 0)
            case .otherUser:
                try genuine.write(to: URL(fileURLWithPath: files.handedBackPath))
                try #require(chown(files.handedBackPath, 65534, 65534) == 0)
            case .genuine:
                try genuine.write(to: URL(fileURLWithPath: files.handedBackPath))
            }
            try await server.startPrefsd()
            #expect(try server.read("/org/example/app/kept") == "1", "\(copy)")
            let removed = try server.read("/org/example/app/reset") == ""
            #expect(removed == (copy == .genuine), "\(copy): the key reset under dconf-service \(removed ? "was" : "was not") removed")
            if copy != .genuine {
                #expect(server.service.log.contains("not a copy prefsd handed back"), "\(copy): \(server.service.log.suffix(2000))")
                // Put back what the next round resets again.
                #expect(try server.dconf(["write", "/org/example/app/reset", "2"]).status == 0)
            }
            #expect(server.service.stopService() == 0)
        }
        #expect(!FileManager.default.fileExists(atPath: files.handedBackPath), "the copy used was not removed")
    }

    @Test(
        "a take-in passes the gate every change passes: a key the administrator forces and keys past a domain's quota are left out and named, the rest taken in, and the change is in the history as dconf-service's"
    )
    func takeInThroughTheGate() async throws {
        let managed = try ServiceFixture.managedDirectory(["org.example.app": ["forced": .string("by the administrator")]])
        defer { try? FileManager.default.removeItem(at: managed) }
        let server = try await DconfServer(startingPrefsd: false)
        let keyfile = """
            [org/example/app]
            forced='mine'
            kept='hello'

            [org/example/full]
            a=1
            b=2
            c=3
            d=4

            """
        #expect(try server.dconf(["load", "/"], input: keyfile).status == 0)
        server.stopDconfService()

        try await server.startPrefsd(arguments: ["--managed-dir", managed.path, "--allow-unowned-managed-dir", "--max-keys-per-domain", "3"])
        let proxy = try PreferencesProxy.connect(address: server.service.bus.address)
        defer { proxy.close() }
        // The administrator's value is what prefsd's readers see, and the user's was not
        // stored under it: dconf's file holds no value for the key.
        #expect(try await proxy.read("org.example.app", "forced") == .string("by the administrator"))
        #expect(try server.read("/org/example/app/forced") == "")
        #expect(try server.read("/org/example/app/kept") == "'hello'")
        #expect(try await proxy.history("org.example.app", key: "forced").isEmpty)
        #expect(try await proxy.history("org.example.app", key: "kept").map(\.who) == ["dconf-service"])
        // Three keys fit the domain; the fourth, in the order taken in, is left out.
        let full = try await proxy.readDomain("org.example.full")
        #expect(full.keys.sorted() == ["a", "b", "c"], "\(full)")
        let log = server.service.log
        #expect(log.contains("/org/example/app/forced: ") && log.contains("forced by the administrator"), "\(log.suffix(3000))")
        #expect(log.contains("/org/example/full/d: ") && log.contains("--max-keys-per-domain"), "\(log.suffix(3000))")
        #expect(log.contains("leftOut=2"), "\(log.suffix(3000))")
    }

    @Test("Blame of a change of 2,000 keys tells the keys the history it reads holds, and says the rest are not told")
    func blameOfALargeChange() async throws {
        let server = try await DconfServer()
        let keyfile = "[org/example/big]\n" + (0..<2_000).map { "k\(String(1_000 + $0))=\($0)\n" }.joined()
        #expect(try server.dconf(["load", "/"], input: keyfile).status == 0)
        let blame = try server.dconf(["blame"])
        #expect(blame.status == 0, "\(blame.stderr)")
        let told = blame.stdout.split(separator: "\n").filter { $0.hasPrefix("  /org/example/big/") }
        #expect(told.count == 1_024, "\(told.count) keys told")
        #expect(
            blame.stdout.contains("  … more keys of this change are not told: Blame reads only the newest entries of the history"),
            "\(blame.stdout.suffix(500))")
    }
}
