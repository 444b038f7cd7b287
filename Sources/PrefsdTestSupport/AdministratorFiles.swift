import Foundation
import PreferencesModel

/// An administrator's files in a directory the test owns: a dconf profile, dconf system
/// databases (`db/NAME.d/` keyfiles and `db/NAME.d/locks/`) and a defaults directory
/// (`defaults/<domain>.plist`). ``arguments`` points a prefsd at them (in place of the
/// fixture's own, empty ones). Files are renamed into place, as an administrator's tools
/// write them, so prefsd never reads half a file.
public struct AdministratorFiles: Sendable {
    /// The directory holding everything.
    public let directory: URL

    /// Makes the directory, with `profile` as the dconf profile's text.
    public init(profile: String = "user-db:user\nsystem-db:site\n") throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-admin-\(UUID().uuidString)")
        for made in [directory, databases, defaults] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        }
        try write(profile, to: self.profile)
    }

    /// The dconf profile.
    public var profile: URL { directory.appendingPathComponent("profile") }
    /// The directory of the dconf system databases.
    public var databases: URL { directory.appendingPathComponent("db", isDirectory: true) }
    /// The defaults directory.
    public var defaults: URL { directory.appendingPathComponent("defaults", isDirectory: true) }

    /// prefsd's arguments for these files (and trusting them though the test owns them).
    public var arguments: [String] {
        [
            "--dconf-profile", profile.path, "--dconf-db-dir", databases.path, "--defaults-dir", defaults.path,
            "--allow-unowned-managed-dir",
        ]
    }

    /// Writes the keyfile `name` of the database `database` (`db/DATABASE.d/NAME`).
    public func keyfile(_ database: String, _ name: String, _ text: String) throws {
        try write(text, to: databases.appendingPathComponent("\(database).d/\(name)"))
    }

    /// Writes the locks file `name` of the database `database` (`db/DATABASE.d/locks/NAME`).
    public func locks(_ database: String, _ name: String, _ text: String) throws {
        try write(text, to: databases.appendingPathComponent("\(database).d/locks/\(name)"))
    }

    /// Writes the defaults of `domain` (`defaults/DOMAIN.plist`).
    public func defaults(_ domain: String, _ values: [String: PropertyListValue]) throws {
        try place(.dictionary(values), domain: domain, in: defaults)
    }

    /// Writes the profile again.
    public func setProfile(_ text: String) throws {
        try write(text, to: profile)
    }

    /// Removes one file (a path below ``directory``).
    public func remove(_ relativePath: String) throws {
        try FileManager.default.removeItem(at: directory.appendingPathComponent(relativePath))
    }

    /// Removes everything.
    public func removeAll() {
        try? FileManager.default.removeItem(at: directory)
    }

    private func write(_ text: String, to file: URL) throws {
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        let temporary = file.deletingLastPathComponent().appendingPathComponent(".\(file.lastPathComponent).tmp")
        try Data(text.utf8).write(to: temporary)
        guard rename(temporary.path, file.path) == 0 else {
            throw FixtureError("cannot rename \(temporary.path): errno \(errno)")
        }
    }
}
