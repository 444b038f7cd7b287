import Foundation
import PrefsdTestSupport
import Testing

/// `prefs dconf-check` against the installed gsettings-desktop-schemas, and GSettings on
/// dconf (Debian's dconf module reading a database `dconf compile` made of the same
/// keyfiles) showing that what it names is what GSettings ignores.
@Suite("prefs dconf-check")
struct DconfCheckTests {
    /// A directory of the test's, removed at the end.
    final class Directory: Sendable {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-dconf-check-\(UUID().uuidString)")

        init() throws {
            try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        }

        deinit {
            try? FileManager.default.removeItem(at: url)
        }

        /// Writes `text` to `name` (folders made as needed); returns its path.
        @discardableResult
        func write(_ name: String, _ text: String) throws -> String {
            let file = url.appendingPathComponent(name)
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try text.write(to: file, atomically: true, encoding: .utf8)
            return file.path
        }
    }

    private func dconfCheck(_ arguments: [String], environment: [String: String] = [:]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand(ServiceFixture.prefsBinary.path, ["dconf-check"] + arguments, environment: environment)
    }

    /// What GSettings on dconf reads for `key` of `schema` with the system database
    /// compiled from `keyfiles` (a keyfile directory) beneath an empty user database.
    private func gsettingsOnDconf(_ keyfiles: URL, in directory: Directory, schema: String, key: String) throws -> String {
        let database = directory.url.appendingPathComponent("compiled-\(UUID().uuidString)")
        let compiled = try runCommand("dconf", ["compile", database.path, keyfiles.path])
        guard compiled.status == 0 else { throw FixtureError("dconf compile failed: \(compiled.stderr)") }
        let profile = try directory.write("profile-\(UUID().uuidString)", "user-db:user\nfile-db:\(database.path)\n")
        let modules = directory.url.appendingPathComponent("gio-modules")
        if !FileManager.default.fileExists(atPath: modules.path) { try DconfGIOModule.link(into: modules) }
        let read = try runCommand(
            "gsettings", ["get", schema, key],
            environment: [
                "GSETTINGS_BACKEND": "dconf", "GIO_MODULE_DIR": modules.path, "DCONF_PROFILE": profile,
                "XDG_CONFIG_HOME": directory.url.appendingPathComponent("config").path,
                "XDG_RUNTIME_DIR": directory.url.path, "DBUS_SESSION_BUS_ADDRESS": "unix:path=\(directory.url.path)/no-bus",
            ])
        guard read.status == 0 else { throw FixtureError("gsettings get failed: \(read.stderr)") }
        return read.stdout
    }

    @Test("the Cinnamon case: idle-delay=60 in a system database is an int32 for a uint32 key; the line that would work is named, and works")
    func cinnamon() throws {
        let directory = try Directory()
        let keyfile = try directory.write("local.d/00-cinnamon", "# screen saver\n[org/gnome/desktop/session]\nidle-delay=60\n")
        let keyfiles = directory.url.appendingPathComponent("local.d")
        // GSettings ignores it: the default, not 60.
        #expect(try gsettingsOnDconf(keyfiles, in: directory, schema: "org.gnome.desktop.session", key: "idle-delay") == "uint32 300\n")
        let check = try dconfCheck([keyfiles.path])
        #expect(check.status == 1, "\(check.stderr)")
        let lines = check.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(check.stdout)")
        let finding = try #require(lines.first)
        #expect(finding.hasPrefix("\(keyfile):3: /org/gnome/desktop/session/idle-delay: 60 is an int32 where org.gnome.desktop.session wants a uint32"))
        #expect(finding.hasSuffix("; write idle-delay=uint32 60"), "\(finding)")
        #expect(lines.last == "GSettings would ignore 1 line of 1 value and 0 locks in 1 file")
        // The line it names is read, and then nothing is left to name.
        try directory.write("local.d/00-cinnamon", "# screen saver\n[org/gnome/desktop/session]\nidle-delay=uint32 60\n")
        #expect(try gsettingsOnDconf(keyfiles, in: directory, schema: "org.gnome.desktop.session", key: "idle-delay") == "uint32 60\n")
        let fixed = try dconfCheck([keyfiles.path])
        #expect(fixed.status == 0)
        #expect(fixed.stdout == "GSettings reads every one of 1 value and 0 locks in 1 file\n")
    }

    @Test("a clean directory of values and locks: status 0")
    func clean() throws {
        let directory = try Directory()
        try directory.write(
            "site.d/00-site",
            """
            [org/gnome/desktop/interface]
            color-scheme='prefer-dark'
            cursor-size=32
            gtk-theme='Adwaita'

            [org/gnome/desktop/wm/preferences]
            button-layout='appmenu:close'
            action-double-click-titlebar='toggle_maximize'

            [org/gnome/desktop/app-folders/folders/Utilities]
            name='Utilities'
            apps=['org.gnome.Terminal.desktop']

            """)
        try directory.write(
            "site.d/locks/00-site", "# locked\n/org/gnome/desktop/interface/color-scheme\n/org/gnome/desktop/app-folders/folders/Utilities/apps\n")
        let check = try dconfCheck([directory.url.appendingPathComponent("site.d").path])
        #expect(check.status == 0, "\(check.stdout)\(check.stderr)")
        #expect(check.stdout == "GSettings reads every one of 7 values and 2 locks in 2 files\n")
    }

    @Test("every kind of value GSettings ignores, and locks of keys no schema has, each named with its file and line")
    func everyKind() throws {
        let directory = try Directory()
        let keyfile = try directory.write(
            "db.d/10-mixed",
            """
            [org/gnome/desktop/interface]
            gtk-theme=Adwaita
            color-scheme='purple'
            cursor-size=uint32 24
            cursor-blink-time=99999
            [org/gnome/desktop/session]
            idle-dealy=uint32 60
            [org/example/nothing]
            key=1

            """)
        let locks = try directory.write("db.d/locks/10-mixed", "/org/gnome/desktop/session/idle-dealy\n/org/example/nothing/key\nno-slash\n")
        let check = try dconfCheck([directory.url.appendingPathComponent("db.d").path])
        #expect(check.status == 1)
        let lines = check.stdout.split(separator: "\n").map(String.init)
        let expected: [(String, String)] = [
            ("\(keyfile):2:", "not GVariant text"), ("\(keyfile):3:", "one of default, prefer-dark, prefer-light"),
            ("\(keyfile):4:", "write cursor-size=24"), ("\(keyfile):5:", "a number from 100 to 2500"),
            ("\(keyfile):7:", "has no key idle-dealy"), ("\(keyfile):9:", "no installed schema has it"),
            ("\(locks):1:", "has no key idle-dealy"), ("\(locks):2:", "no installed schema has it"), ("\(locks):3:", "not a key to lock"),
        ]
        #expect(lines.count == expected.count + 1, "\(check.stdout)")
        for ((prefix, text), line) in zip(expected, lines) {
            #expect(line.hasPrefix(prefix) && line.contains(text), "\(line) should start with \(prefix) and say \(text)")
        }
        #expect(lines.first?.hasSuffix("write gtk-theme='Adwaita'") == true)
        #expect(lines.last == "GSettings would ignore 9 lines of 6 values and 2 locks in 2 files")
    }

    @Test("without a directory, the profile's system databases; a database without keyfiles, or no profile, leaves nothing to check")
    func profileDatabases() throws {
        let directory = try Directory()
        let profile = try directory.write("profile", "user-db:user\nsystem-db:prefsd-test-no-such-database\n")
        let check = try dconfCheck([], environment: ["DCONF_PROFILE": profile])
        #expect(check.status == 0)
        #expect(check.stderr.contains("/etc/dconf/db/prefsd-test-no-such-database.d: no such directory"), "\(check.stderr)")
        let missing = try dconfCheck([directory.url.appendingPathComponent("none.d").path])
        #expect(missing.status == 74, "\(missing.stderr)")
    }
}
