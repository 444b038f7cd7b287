import Dconf
import Foundation
import Testing

@Suite("Reading dconf's profile")
struct DconfProfileTests {
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
