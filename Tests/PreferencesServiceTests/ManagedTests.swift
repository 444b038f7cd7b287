import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol
import PrefsdTestSupport
import Testing

@Suite("Managed (forced) preferences")
struct ManagedTests {
    /// A fixture whose prefsd reads managed domains from a directory the test owns.
    private func managedFixture(files: [String: PropertyListValue] = [:]) async throws -> (ServiceFixture, URL) {
        let directory = try ServiceFixture.managedDirectory()
        for (domain, value) in files { try place(value, domain: domain, in: directory) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path, "--allow-unowned-managed-dir"])
        return (fixture, directory)
    }

    private let forced = PreferencesErrorName.forced.busName

    @Test("files added, edited and removed while prefsd runs take effect and emit Changed; the user's value comes back")
    func liveChanges() async throws {
        let (fixture, directory) = try await managedFixture()
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = ServiceClient(connection: try fixture.connect())
        let watcher = try await ChangedCollector(connection: try fixture.connect(), domains: ["NSGlobalDomain"])
        try await client.write("NSGlobalDomain", "Theme", .string("dark"))
        try await watcher.wait(for: 1)

        try place(.dictionary(["Theme": .string("lab")]), domain: "NSGlobalDomain", in: directory)
        try await watcher.wait(for: 2)
        #expect(try await client.readValue("NSGlobalDomain", "Theme") == .string("lab"))
        #expect(watcher.signals.last?.changed == ["Theme": .string("lab")])

        try place(.dictionary(["Theme": .string("lab2"), "Locked": .boolean(true)]), domain: "NSGlobalDomain", in: directory)
        try await watcher.wait(for: 3)
        #expect(watcher.signals.last?.changed == ["Theme": .string("lab2"), "Locked": .boolean(true)])

        try FileManager.default.removeItem(at: directory.appendingPathComponent("NSGlobalDomain.plist"))
        try await watcher.wait(for: 4)
        #expect(watcher.signals.count == 4)
        #expect(watcher.signals.last?.changed == ["Theme": .string("dark")])
        #expect(watcher.signals.last?.removed == ["Locked"])
        #expect(try await client.readValue("NSGlobalDomain", "Theme") == .string("dark"))
        #expect(try await client.call("IsForced", [.string("NSGlobalDomain"), .string("Theme")]) == [.boolean(false)])
    }

    @Test("a malformed file is logged with its path and ignored; the previous good state stays")
    func malformed() async throws {
        let (fixture, directory) = try await managedFixture(files: ["com.example.Lab": .dictionary(["Proxy": .string("good")])])
        defer { try? FileManager.default.removeItem(at: directory) }
        let client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.readValue("com.example.Lab", "Proxy") == .string("good"))
        let file = directory.appendingPathComponent("com.example.Lab.plist")
        try Data("<plist><dict><key>Proxy</key>".utf8).write(to: file)
        let deadline = ContinuousClock.now + .seconds(5)
        while !fixture.log.contains(file.path), ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(fixture.log.contains(file.path))
        #expect(try await client.readValue("com.example.Lab", "Proxy") == .string("good"))
        #expect(fixture.isRunning, "prefsd exited on a malformed managed file: \(fixture.log)")
    }

    @Test("a managed directory writable by others is ignored, whoever owns it")
    func writableByOthers() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-managed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try PropertyListValue.dictionary(["K": .integer(1)]).xmlPropertyListData().write(to: directory.appendingPathComponent("com.example.Lab.plist"))
        chmod(directory.path, 0o777)
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path])
        let client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.call("IsForced", [.string("com.example.Lab"), .string("K")]) == [.boolean(false)])
        #expect(fixture.log.contains("must be owned by root"))
    }

    @Test("a managed directory not owned by root is ignored though no one else can write to it; owned by root, it is used")
    func ownership() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-managed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        try PropertyListValue.dictionary(["K": .integer(1)]).xmlPropertyListData().write(to: directory.appendingPathComponent("com.example.Lab.plist"))
        // 0755, so only the owner check can refuse it: as root, given to nobody (65534);
        // otherwise it is the test's user's already.
        chmod(directory.path, 0o755)
        if getuid() == 0 { try #require(chown(directory.path, 65534, 65534) == 0, "chown: errno \(errno)") }
        var info = stat()
        try #require(stat(directory.path, &info) == 0 && info.st_uid != 0 && info.st_mode & 0o7777 == 0o755)
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path])
        let client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.call("IsForced", [.string("com.example.Lab"), .string("K")]) == [.boolean(false)])
        #expect(fixture.log.contains("must be owned by root"))
        #expect(fixture.log.contains("owner=\(info.st_uid)"), "\(fixture.log)")
        // The control (needs root to give it back): the same directory owned by root is
        // used, so the owner was the only reason it was refused.
        if getuid() == 0 {
            try #require(chown(directory.path, 0, 0) == 0, "chown: errno \(errno)")
            let forced = try await eventually(timeout: .seconds(30)) {
                try await client.call("IsForced", [.string("com.example.Lab"), .string("K")]) == [.boolean(true)]
            }
            #expect(forced, "prefsd log: \(fixture.log)")
        }
    }

    @Test("a managed directory created after prefsd started is picked up")
    func createdLater() async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-managed-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let fixture = try await ServiceFixture(arguments: ["--managed-dir", directory.path, "--allow-unowned-managed-dir", "--log-level", "debug"])
        let client = ServiceClient(connection: try fixture.connect())
        #expect(try await client.call("IsForced", [.string("com.example.Lab"), .string("K")]) == [.boolean(false)])
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try place(.dictionary(["K": .integer(1)]), domain: "com.example.Lab", in: directory)
        // Polled once a second; the deadline only bounds a machine that stalls under load.
        let deadline = ContinuousClock.now + .seconds(30)
        var forced = false
        while !forced, ContinuousClock.now < deadline {
            forced = try await client.call("IsForced", [.string("com.example.Lab"), .string("K")]) == [.boolean(true)]
            if !forced { try await Task.sleep(for: .milliseconds(50)) }
        }
        #expect(forced, "prefsd log: \(fixture.log)")
    }
}
