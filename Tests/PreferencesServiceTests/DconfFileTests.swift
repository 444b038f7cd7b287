import Foundation
import PreferencesModel
import Testing

@testable import PreferencesService

@Suite("Reading dconf's profile, keyfiles and locks")
struct DconfFileTests {
    private func read(_ text: String) -> (values: [MappedKey: PropertyListValue], problems: [FileProblem]) {
        DconfKeyfileReader.read(Array(text.utf8)) { _, _ in }
    }

    private func key(_ domain: String, _ key: String) throws -> MappedKey {
        MappedKey(domain: try DomainName(domain), key: key)
    }

    @Test("keyfile groups map through the path rule; the last line of a key wins; CRLF, blanks and comments are fine")
    func keyfile() throws {
        let (values, problems) = read(
            "# site\r\n[/]\r\ntop=1\r\n\r\n[org/gnome/desktop/interface]\r\n  gtk-theme = 'A'\r\ngtk-theme='B'\r\n[org/example/App]\r\nsize=(1, 2)\r\n")
        #expect(problems == [])
        #expect(values[try key("_", "top")] == .integer(1))
        #expect(values[try key("org.gnome.desktop", "interface/gtk-theme")] == .string("B"))
        #expect(values[try key("org.example.App", "size")] == .string("@(ii) (1, 2)"))
    }

    @Test("every bad line is reported with its number and the others are read")
    func badLines() {
        let (values, problems) = read("[org/example/App]\nok=1\nnonsense\n[x\nafter=2\n[org/example/App]\nbad='unterminated\nlast=3\n")
        #expect(values.count == 2)
        #expect(problems.map(\.line) == [3, 4, 5, 7])
    }

    @Test("locks: keys starting with /, the rest reported; not a key or not mappable reported")
    func locks() throws {
        let (keys, problems) = DconfLocksReader.read(
            Array("# locks\n/org/example/App/size\norg/example/App/x\n/org/example/App/\n /org/example/App/y\n\n".utf8))
        #expect(keys == [try key("org.example.App", "size")])
        #expect(problems.map(\.line) == [3, 4, 5])
    }

    @Test("the profile: system-db lines in order; other kinds skipped; unknown kinds and path names reported")
    func profile() {
        var reported: [Int] = []
        let profile = DconfProfile.parse(
            "user-db:user # me\n\nsystem-db:local\nfile-db:/x\nservice-db:y\nsystem-db:site\nweird\nnope:x\nsystem-db:a/b\n", path: "p"
        ) { line, _ in
            reported.append(line)
        }
        #expect(profile.systemDatabases == ["local", "site"])
        #expect(reported == [7, 8, 9])
    }

    @Test("the profile is found as dconf finds it: an explicit file, $DCONF_PROFILE as a path or a name, else the user profile")
    func locate() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-profile-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("dconf/profile"), withIntermediateDirectories: true)
        try Data("system-db:x\n".utf8).write(to: directory.appendingPathComponent("dconf/profile/site"))
        // An unused uid: no mandatory profile in /run/dconf/user.
        let uid: uid_t = 4_000_000_000
        #expect(DconfProfile.locate(explicit: "/given", environment: ["DCONF_PROFILE": "/other"], userID: uid) == "/given")
        #expect(DconfProfile.locate(explicit: nil, environment: ["DCONF_PROFILE": "/other"], userID: uid) == "/other")
        #expect(
            DconfProfile.locate(explicit: nil, environment: ["DCONF_PROFILE": "site", "XDG_DATA_DIRS": directory.path], userID: uid)
                == directory.appendingPathComponent("dconf/profile/site").path)
        // A named profile found nowhere is still that profile (read as missing: no databases).
        #expect(
            DconfProfile.locate(explicit: nil, environment: ["DCONF_PROFILE": "absent", "XDG_DATA_DIRS": directory.path], userID: uid)
                == "/etc/dconf/profile/absent")
    }
}
