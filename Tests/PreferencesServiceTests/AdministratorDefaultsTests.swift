import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

@Suite("Administrator defaults and dconf's system databases")
struct AdministratorDefaultsTests {
    private let forced = PreferencesErrorName.forced.busName
    private let notFound = PreferencesErrorName.notFound.busName

    /// A fixture whose prefsd reads `files`.
    private func fixture(_ files: AdministratorFiles, _ more: [String] = []) async throws -> ServiceFixture {
        try await ServiceFixture(arguments: files.arguments + more)
    }

    /// Waits until `condition` holds, or fails after a few seconds.
    private func eventually(_ what: String, _ condition: () async throws -> Bool) async throws {
        let deadline = ContinuousClock.now + .seconds(10)
        while ContinuousClock.now < deadline {
            if try await condition() { return }
            try await Task.sleep(for: .milliseconds(20))
        }
        throw FixtureError("\(what) did not happen within 10 s")
    }

    @Test("a locked key is forced to the database's value; an unlocked one is a default the user's value overrides and its removal reveals")
    func lockAndDefault() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        try files.keyfile("site", "00-site", "[org/example/Test]\ntext='site text'\nint32=42\n\n[org/gnome/desktop/interface]\ngtk-theme='Site'\n")
        try files.locks("site", "site", "/org/example/Test/text\n")
        let service = try await fixture(files)
        let client = ServiceClient(connection: try service.connect())
        let domain = "org.example.Test"

        #expect(try await client.readValue(domain, "text") == .string("site text"))
        #expect(try await client.call("IsForced", [.string(domain), .string("text")]) == [.boolean(true)])
        #expect(try await client.call("ForcedKeys", [.string(domain)]) == [.stringArray(["text"])])
        #expect(await client.refusal("Write", [.string(domain), .string("text"), .variant(.string("mine"))]) == forced)
        #expect(await client.refusal("Remove", [.string(domain), .string("text")]) == forced)
        #expect(try await client.readValue("org.gnome.desktop", "interface/gtk-theme") == .string("Site"))

        // The default: served, overridden, revealed again; every step announced.
        let watcher = try await ChangedCollector(connection: try service.connect(), domains: [domain])
        #expect(try await client.readValue(domain, "int32") == .integer(42))
        #expect(try await client.call("IsForced", [.string(domain), .string("int32")]) == [.boolean(false)])
        try await client.write(domain, "int32", .integer(7))
        #expect(try await client.readValue(domain, "int32") == .integer(7))
        #expect(try await client.readDomain(domain) == ["text": .string("site text"), "int32": .integer(7)])
        _ = try await client.call("Remove", [.string(domain), .string("int32")])
        #expect(try await client.readValue(domain, "int32") == .integer(42))
        // Setting the value a read already answers changes nothing readers see: no signal.
        try await client.write(domain, "int32", .integer(42))
        try await client.write(domain, "sentinel", .boolean(true))
        try await watcher.wait(for: 3)
        let signals = watcher.signals
        #expect(signals.count == 3)
        #expect(signals.first?.changed == ["int32": .integer(7)])
        #expect(signals.dropFirst().first?.changed == ["int32": .integer(42)], "removing the user's value announces the default")
        #expect(signals.dropFirst().first?.removed == [])
        #expect(signals.last?.changed == ["sentinel": .boolean(true)])
        // A domain only an administrator sets is readable whole, though it holds nothing of the user's.
        #expect(try await client.readDomain("org.gnome.desktop") == ["interface/gtk-theme": .string("Site")])
        #expect(try await client.domains().contains("org.gnome.desktop") == false)
    }

    @Test("`prefs read` merges, `-array-add` appends to a default, Lookup finds it")
    func prefsTool() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        try files.defaults("com.example.Editor", ["FontSize": .integer(12), "Recent": .array([.string("a.txt")])])
        let service = try await fixture(files)
        #expect(try service.prefs("write", "com.example.Editor", "Theme", "dark").status == 0)
        let read = try service.prefs("read", "com.example.Editor")
        #expect(read.status == 0)
        #expect(read.stdout.contains("FontSize = 12") && read.stdout.contains("Theme = dark"), "\(read.stdout)")
        #expect(try service.prefs("read", "com.example.Editor", "FontSize").stdout == "12\n")
        let added = try service.prefs("write", "com.example.Editor", "Recent", "-array-add", "b.txt")
        #expect(added.status == 0, "\(added.stderr)")
        let client = ServiceClient(connection: try service.connect())
        #expect(try await client.readValue("com.example.Editor", "Recent") == .array([.string("a.txt"), .string("b.txt")]))
        let lookup = try await client.call("Lookup", [.stringArray(["NSGlobalDomain", "com.example.Editor"]), .string("FontSize")])
        #expect(lookup == [.string("com.example.Editor"), .variant(.int64(12))])
        #expect(try service.prefs("delete", "com.example.Editor", "Recent").status == 0)
        #expect(try await client.readValue("com.example.Editor", "Recent") == .array([.string("a.txt")]))
    }

    @Test("databases layer as dconf's do: the first sets the default, the last lock wins, a lock without a value reads absent")
    func layering() async throws {
        let files = try AdministratorFiles(profile: "# a site\nuser-db:user\nsystem-db:local\nsystem-db:site\n")
        defer { files.removeAll() }
        try files.keyfile("local", "10-local", "[org/example/Test]\nboth=1\nlockedlow=1\nlockedhigh=1\n")
        try files.keyfile("site", "10-site", "[org/example/Test]\nboth=2\nlockedlow=2\nlockedhigh=2\nsiteonly=2\n")
        // Later keyfile names win within a database.
        try files.keyfile("site", "20-site", "[org/example/Test]\nsiteonly=3\n")
        try files.locks("local", "l", "/org/example/Test/lockedlow\n/org/example/Test/nothing\n")
        try files.locks("site", "s", "/org/example/Test/lockedhigh\n")
        let service = try await fixture(files)
        let client = ServiceClient(connection: try service.connect())
        let domain = "org.example.Test"
        #expect(try await client.readValue(domain, "both") == .integer(1))
        #expect(try await client.readValue(domain, "lockedlow") == .integer(1))
        #expect(try await client.readValue(domain, "lockedhigh") == .integer(2))
        #expect(try await client.readValue(domain, "siteonly") == .integer(3))
        #expect(try await client.call("ForcedKeys", [.string(domain)]) == [.stringArray(["lockedhigh", "lockedlow", "nothing"])])
        #expect(await client.refusal("Read", [.string(domain), .string("nothing")]) == notFound)
        #expect(await client.refusal("Write", [.string(domain), .string("nothing"), .variant(.int64(1))]) == forced)
    }

    @Test("keyfiles, locks and defaults edited while prefsd runs take effect and are announced")
    func live() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        let service = try await fixture(files)
        let client = ServiceClient(connection: try service.connect())
        let domain = "org.example.Test"
        let watcher = try await ChangedCollector(connection: try service.connect(), domains: [domain, "com.example.Editor"])
        #expect(await client.refusal("Read", [.string(domain), .string("int32")]) == notFound)

        try files.keyfile("site", "00-site", "[org/example/Test]\nint32=42\n")
        try await watcher.wait(for: 1)
        #expect(watcher.signals.last?.changed == ["int32": .integer(42)])
        try files.keyfile("site", "00-site", "[org/example/Test]\nint32=43\n")
        try await watcher.wait(for: 2)
        #expect(watcher.signals.last?.changed == ["int32": .integer(43)])

        try await client.write(domain, "text", .string("mine"))
        try await watcher.wait(for: 3)
        try files.keyfile("site", "00-site", "[org/example/Test]\nint32=43\ntext='site'\n")
        try files.locks("site", "site", "/org/example/Test/text\n")
        try await watcher.wait(for: 4)
        #expect(watcher.signals.last?.changed == ["text": .string("site")])
        #expect(try await client.call("IsForced", [.string(domain), .string("text")]) == [.boolean(true)])
        try files.remove("db/site.d/locks/site")
        try await watcher.wait(for: 5)
        #expect(watcher.signals.last?.changed == ["text": .string("mine")], "the user's value comes back")
        #expect(try await client.call("IsForced", [.string(domain), .string("text")]) == [.boolean(false)])

        try files.defaults("com.example.Editor", ["FontSize": .integer(12)])
        try await watcher.wait(for: 6)
        #expect(watcher.signals.last?.domain == "com.example.Editor")
        #expect(watcher.signals.last?.changed == ["FontSize": .integer(12)])

        // A profile that no longer names the database takes its settings away.
        try files.setProfile("user-db:user\n")
        try await watcher.wait(for: 7)
        #expect(watcher.signals.last?.removed == ["int32"])
        #expect(try await client.readValue(domain, "text") == .string("mine"))
    }

    @Test("malformed keyfile, locks and profile lines are logged with file:line; the rest applies; values obey the bus's limits")
    func malformed() async throws {
        let files = try AdministratorFiles(profile: "user-db:user\nbogus-db:x\nsystem-db:../etc\nsystem-db:site\n")
        defer { files.removeAll() }
        let deep = String(repeating: "[", count: 40) + "1" + String(repeating: "]", count: 40)
        try files.keyfile(
            "site", "00-site",
            """
            [org/example/Test]
            good=1
            no equals sign here
            broken=[1,
            big='\(String(repeating: "x", count: 300))'
            deep=\(deep)
            [unclosed
            lost=2
            [org/example/Test]
            alsogood='yes'

            """)
        try files.locks("site", "site", "org/example/Test/good\n/org/example/Test/alsogood\n")
        let service = try await fixture(files, ["--max-value-size", "256"])
        let client = ServiceClient(connection: try service.connect())
        let domain = "org.example.Test"
        #expect(try await client.readValue(domain, "good") == .integer(1))
        #expect(try await client.readValue(domain, "alsogood") == .string("yes"))
        #expect(try await client.call("ForcedKeys", [.string(domain)]) == [.stringArray(["alsogood"])])
        for key in ["broken", "big", "deep", "lost"] {
            #expect(await client.refusal("Read", [.string(domain), .string(key)]) == notFound, "\(key)")
        }
        let keyfile = files.databases.appendingPathComponent("site.d/00-site").path
        let locks = files.databases.appendingPathComponent("site.d/locks/site").path
        let log = service.log
        for line in [3, 4, 5, 6, 7, 8] {
            #expect(log.contains("\(keyfile):\(line): "), "line \(line) not reported: \(log)")
        }
        #expect(!log.contains("\(keyfile):2: "))
        #expect(log.contains("\(locks):1: "))
        #expect(log.contains("\(files.profile.path):2: "))
        #expect(log.contains("\(files.profile.path):3: "))
        #expect(log.contains("over the limit of 256"))
        #expect(service.isRunning)
    }

    @Test("a sandboxed-style reader of its own domain and a host reader see the same defaults; RemoveDomain reveals them")
    func removeDomainReveals() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        try files.defaults("com.example.Editor", ["FontSize": .integer(12)])
        let service = try await fixture(files)
        let client = ServiceClient(connection: try service.connect())
        try await client.write("com.example.Editor", "FontSize", .integer(20))
        try await client.write("com.example.Editor", "Other", .boolean(true))
        let watcher = try await ChangedCollector(connection: try service.connect(), domains: ["com.example.Editor"])
        _ = try await client.call("RemoveDomain", [.string("com.example.Editor")])
        try await watcher.wait(for: 1)
        #expect(watcher.signals.first?.changed == ["FontSize": .integer(12)])
        #expect(watcher.signals.first?.removed == ["Other"])
        #expect(try await client.readDomain("com.example.Editor") == ["FontSize": .integer(12)])
    }

    @Test("a dconf database directory or defaults directory not owned by root is ignored: a user cannot lock or default keys for others")
    func ownership() async throws {
        let files = try AdministratorFiles()
        defer { files.removeAll() }
        try files.keyfile("site", "00-site", "[org/example/Test]\ntext='site text'\n")
        try files.locks("site", "site", "/org/example/Test/text\n")
        try files.defaults("com.example.Editor", ["FontSize": .integer(12)])
        var info = stat()
        try #require(stat(files.databases.path, &info) == 0)
        if info.st_uid == 0 {
            // As root, give them to nobody, so only the owner check can refuse them.
            try #require(chown(files.databases.path, 65534, 65534) == 0 && chown(files.defaults.path, 65534, 65534) == 0)
        }
        let service = try await ServiceFixture(arguments: files.arguments.filter { $0 != "--allow-unowned-managed-dir" })
        let client = ServiceClient(connection: try service.connect())
        #expect(try await client.call("IsForced", [.string("org.example.Test"), .string("text")]) == [.boolean(false)])
        #expect(await client.refusal("Read", [.string("org.example.Test"), .string("text")]) == notFound)
        #expect(await client.refusal("Read", [.string("com.example.Editor"), .string("FontSize")]) == notFound)
        #expect(service.log.contains("must be owned by root"), "\(service.log)")
    }
}
