import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A dconf profile: which system databases (`system-db:NAME` lines) lie under the user's
/// own values, in the order dconf reads them. prefsd follows it (its administrator
/// defaults), `prefs dconf-check` checks its databases.
///
/// Found as dconf finds it (`engine/dconf-engine-profile.c`) unless a file is named
/// (`prefsd --dconf-profile`): the mandatory profile `/run/dconf/user/<uid>`, else `$DCONF_PROFILE` (a
/// path, or a name looked up in `/etc/dconf/profile/` and then in each
/// `$XDG_DATA_DIRS/dconf/profile/`), else `$XDG_RUNTIME_DIR/dconf/profile`, else the
/// profile named `user`. No profile at all means no system databases.
public struct DconfProfile: Sendable, Equatable {
    /// The profile file read, when there is one.
    public var path: String?
    /// The names of its system databases, in profile order (the first takes precedence).
    public var systemDatabases: [String] = []

    /// A profile read from `path` (none: no profile file), naming `systemDatabases`.
    public init(path: String? = nil, systemDatabases: [String] = []) {
        self.path = path
        self.systemDatabases = systemDatabases
    }

    /// The file the profile is read from: `explicit` when given, else dconf's order of
    /// places. `nil` when there is none.
    public static func locate(explicit: String?, environment: [String: String], userID: uid_t = getuid()) -> String? {
        if let explicit { return explicit }
        func exists(_ path: String) -> Bool { access(path, F_OK) == 0 }
        let mandatory = "/run/dconf/user/\(userID)"
        if exists(mandatory) { return mandatory }
        if let named = environment["DCONF_PROFILE"], !named.isEmpty {
            return named.hasPrefix("/") ? named : find(named, environment: environment) ?? "/etc/dconf/profile/\(named)"
        }
        if let runtime = environment["XDG_RUNTIME_DIR"], runtime.hasPrefix("/"), exists(runtime + "/dconf/profile") {
            return runtime + "/dconf/profile"
        }
        return find("user", environment: environment)
    }

    /// The profile named `name` in `/etc/dconf/profile/`, else in the first of the XDG data
    /// directories that has it.
    private static func find(_ name: String, environment: [String: String]) -> String? {
        let dataDirectories = (environment["XDG_DATA_DIRS"].flatMap { $0.isEmpty ? nil : $0 } ?? "/usr/local/share:/usr/share")
            .split(separator: ":").filter { $0.hasPrefix("/") }.map(String.init)
        for directory in ["/etc"] + dataDirectories {
            let path = directory + "/dconf/profile/" + name
            if access(path, F_OK) == 0 { return path }
        }
        return nil
    }

    /// Parses the text of a profile, as dconf does: one database per line, `#` starts a
    /// comment, blanks around are ignored. Lines prefsd cannot use are handed to `report`
    /// with their line number: an unknown kind of database (dconf warns about those too), a
    /// system database name that is not a plain file name. `user-db`, `service-db` and
    /// `file-db` lines are known and skipped: prefsd's store is the user's database.
    public static func parse(_ text: String, path: String, report: (_ line: Int, _ message: String) -> Void) -> DconfProfile {
        var profile = DconfProfile(path: path)
        for (index, rawLine) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = rawLine.prefix { $0 != "#" }.trimmingCharacters(in: .whitespaces)
            guard !line.isEmpty else { continue }
            guard let colon = line.firstIndex(of: ":"), line.index(after: colon) < line.endIndex else {
                report(index + 1, "\"\(line)\" is not a dconf database description (KIND:NAME, such as system-db:local); the line is ignored")
                continue
            }
            let kind = line[..<colon], name = String(line[line.index(after: colon)...])
            switch kind {
            case "system-db":
                guard !name.contains("/"), name != ".", name != ".." else {
                    report(
                        index + 1,
                        "system-db:\(name) does not name a database in the dconf database directory (a plain name, such as local); the line is ignored")
                    continue
                }
                profile.systemDatabases.append(name)
            case "user-db", "service-db", "file-db":
                continue
            default:
                report(index + 1, "unknown dconf database kind \"\(kind)\" (system-db, user-db, service-db or file-db); the line is ignored")
            }
        }
        return profile
    }
}
