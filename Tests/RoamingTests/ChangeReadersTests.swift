import Foundation
import PreferencesModel
import PrefsdTestSupport
import Testing

/// Which changes this machine publishes in its file of the roaming folder, whatever made
/// them: a dconf client's `Change`, an undo, the take-in of dconf-service's database; and
/// what it never publishes: what an administrator sets.
@Suite("Every source's change roams, or not, as the contract says")
struct RoamingChangeReadersTests {
    typealias Machine = RoamingFolderTests.Machine
    static let editor = RoamingFolderTests.editor

    /// Waits until this machine's file says `value` for `key`.
    private func published(_ machine: Machine, _ key: String, _ value: PropertyListValue) async -> Bool {
        await eventually { machine.published()[key] == .some(value) }
    }

    @Test("a dconf client's Change is published as this machine's change")
    func dconfChange() async throws {
        let machine = try await Machine(extra: ["--dconf"])
        defer { try? FileManager.default.removeItem(at: machine.root) }
        let fixture = machine.fixture
        #expect(await eventually { fixture.bus.processID(owning: "ca.desrt.dconf") == fixture.pid }, "\(fixture.log)")
        let written = try runCommand("dconf", ["write", "/com/example/Editor/FontSize", "14"], environment: try machine.dconfEnvironment())
        #expect(written.status == 0, "\(written.stderr)")
        #expect(await machine.value("FontSize") == .integer(14))
        #expect(await published(machine, "FontSize", .integer(14)), "published: \(machine.published())\n\(fixture.log)")
    }

    @Test("an undo is published as this machine's change")
    func undo() async throws {
        let machine = try await Machine()
        defer { try? FileManager.default.removeItem(at: machine.root) }
        try await machine.client.write(Self.editor, "FontSize", .integer(12))
        try await machine.client.write(Self.editor, "FontSize", .integer(14))
        #expect(await published(machine, "FontSize", .integer(14)), "published: \(machine.published())")
        let undone = try machine.fixture.prefs("undo", Self.editor, "FontSize")
        #expect(undone.status == 0, "\(undone.stdout)\(undone.stderr)")
        #expect(await published(machine, "FontSize", .integer(12)), "published: \(machine.published())\n\(machine.fixture.log)")
    }

    @Test("the values prefsd takes in from dconf-service's database at start are published as this machine's")
    func takeIn() async throws {
        // Roaming chosen while prefsd does not serve dconf; then dconf-service writes its
        // database, as it does before `prefs dconf-switch`.
        let machine = try await Machine()
        defer { try? FileManager.default.removeItem(at: machine.root) }
        let fixture = machine.fixture
        #expect(fixture.stopService() == 0)
        let environment = try machine.dconfEnvironment()
        let dconfService = """
            [D-BUS Service]
            Name=ca.desrt.dconf
            Exec=/usr/bin/env XDG_CONFIG_HOME=\(environment["XDG_CONFIG_HOME"] ?? "") XDG_RUNTIME_DIR=\(fixture.runtimeDirectory.path) /usr/libexec/dconf-service
            """
        try FileManager.default.createDirectory(at: fixture.runtimeDirectory, withIntermediateDirectories: true)
        try dconfService.write(to: fixture.bus.serviceDirectory.appendingPathComponent("ca.desrt.dconf.service"), atomically: true, encoding: .utf8)
        let written = try runCommand("dconf", ["write", "/com/example/Editor/FontSize", "9"], environment: environment)
        #expect(written.status == 0, "dconf-service: \(written.stderr)")
        let dconfServicePID = try #require(fixture.bus.processID(owning: "ca.desrt.dconf"), "dconf-service does not run")
        kill(dconfServicePID, SIGKILL)
        #expect(await eventually { fixture.bus.processID(owning: "ca.desrt.dconf") == nil })

        try await fixture.startService(arguments: machine.arguments + ["--dconf"])
        #expect(await machine.value("FontSize") == .integer(9), "\(fixture.log)")
        #expect(await published(machine, "FontSize", .integer(9)), "published: \(machine.published())\n\(fixture.log)")
    }

    @Test(
        "what an administrator sets is never published: a managed file's forced value, a dconf database's default and lock, a plist default; the user's value stays what the folder holds"
    )
    func administratorValues() async throws {
        let managed = try ServiceFixture.managedDirectory()
        let files = try AdministratorFiles()
        defer {
            try? FileManager.default.removeItem(at: managed)
            files.removeAll()
        }
        let machine = try await Machine(extra: ["--managed-dir", managed.path] + files.arguments)
        defer { try? FileManager.default.removeItem(at: machine.root) }
        try await machine.client.write(Self.editor, "FontSize", .integer(14))
        try await machine.client.write(Self.editor, "Theme", .string("mine"))
        #expect(await published(machine, "Theme", .string("mine")), "published: \(machine.published())")

        try place(.dictionary(["FontSize": .integer(20)]), domain: Self.editor, in: managed)
        try files.keyfile("site", "00-site", "[com/example/Editor]\nTheme='site'\nSpacing=3\n")
        try files.locks("site", "site", "/com/example/Editor/Theme\n")
        try files.defaults(Self.editor, ["Accent": .string("system")])
        let inForce = await eventually {
            let values = (try? await machine.client.readDomain(Self.editor)) ?? [:]
            return values["FontSize"] == .integer(20) && values["Theme"] == .string("site") && values["Spacing"] == .integer(3)
                && values["Accent"] == .string("system")
        }
        #expect(inForce, "\(machine.fixture.log)")
        // A change published after those were in force: the folder has it, and still only
        // the user's values.
        try await machine.client.write(Self.editor, "Sentinel", .integer(1))
        #expect(await published(machine, "Sentinel", .integer(1)), "published: \(machine.published())")
        let published = machine.published()
        #expect(published["FontSize"] == .some(.integer(14)) && published["Theme"] == .some(.string("mine")), "published: \(published)")
        // An administrator's new default is a change readers see, but not the user's: no
        // removal of the key is published (one would win over another machine's value the
        // folder has not brought in yet).
        #expect(published["Spacing"] == nil && published["Accent"] == nil, "published: \(published)")
    }
}
