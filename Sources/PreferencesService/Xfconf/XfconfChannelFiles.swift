import Foundation
import RegularFiles
import Xfconf

/// Where xfconfd keeps its channel files, and where prefsd notes which of them the store
/// holds.
///
/// - The user's channels: `$XDG_CONFIG_HOME/xfce4/xfconf/xfce-perchannel-xml/C.xml`
///   (`~/.config/…` without it), which prefsd takes in at start and writes at stop.
/// - The administrator's: the same folder under each of `$XDG_CONFIG_DIRS`, then under
///   `/etc/xdg` (which xfconfd reads whatever the variable says), the first folder the most
///   important, as xfconfd reads them.
/// - prefsd's notes, `STORE/xfconf-channels/C.xml`: the bytes of each user's channel file as
///   the store last held it (taken in, or written at stop). A user's file that is the same is
///   not taken in again; one that differs was written by someone else (xfconfd, after
///   `prefs xfconf-switch-back`) and is taken in, a property the note has and the file lacks
///   being removed (it was reset there).
struct XfconfChannelFiles: Sendable {
    /// The user's channel folder.
    var userDirectory: String
    /// The administrator's channel folders, the most important first.
    var systemDirectories: [String]
    /// prefsd's notes of what the store holds, one file per channel.
    var notesDirectory: String

    /// The folders of `environment` (as xfconfd finds them, ``XfconfFolders``), the notes in
    /// `storeDirectory`.
    init(environment: [String: String], storeDirectory: URL) {
        var environment = environment
        if environment["HOME"] == nil { environment["HOME"] = NSHomeDirectory() }
        userDirectory = XfconfFolders.user(environment: environment)
        systemDirectories = XfconfFolders.system(environment: environment)
        notesDirectory = storeDirectory.appendingPathComponent("xfconf-channels").path
    }

    /// The channel files in `directory`, by channel name (`C.xml` is channel `C`), whatever
    /// they are (a file that is no regular one is refused when read).
    static func channelFiles(in directory: String) -> [String: String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [:] }
        var files: [String: String] = [:]
        for name in names where name.hasSuffix(".xml") && name.utf8.count > 4 {
            files[String(name.dropLast(4))] = directory + "/" + name
        }
        return files
    }

    /// The path of channel `name`'s file in the user's folder.
    func userFile(_ name: String) -> String { userDirectory + "/" + name + ".xml" }

    /// The path of prefsd's note of channel `name`.
    func note(_ name: String) -> String { notesDirectory + "/" + name + ".xml" }

    /// The bytes of the file at `path`, at most `limit`, only when it is a regular file (or a
    /// link to one): a FIFO, device or socket is never opened, a link that loops is refused.
    static func read(_ path: String, limit: Int) throws(RegularFile.Failure) -> [UInt8] {
        try RegularFile.contents(atPath: path, limit: limit, followingSymlinks: true)
    }

    /// Replaces the file at `path` with `bytes` durably (its folder made first): written
    /// beside it, synced, renamed over it and the rename synced, so a crash leaves the old
    /// file or the new one.
    static func write(_ bytes: [UInt8], to path: String) throws(RegularFile.Failure) {
        try ReplacementFile.replace(path, with: bytes, synced: true)
    }

    /// Moves what is at `path` aside, renaming it `PATH.KIND-TIME` beside it: the new path.
    /// - Throws: the system's reason when it cannot be moved.
    static func moveAside(_ path: String, kind: String, at time: String) throws(XfconfFileError) -> String {
        let aside = path + "." + kind + "-" + time
        guard rename(path, aside) == 0 else { throw XfconfFileError(reason: String(cString: strerror(errno))) }
        return aside
    }

    /// The time for the names of copies kept aside (`20261207T071500Z`).
    static func timestamp() -> String {
        Date().ISO8601Format().replacingOccurrences(of: "-", with: "").replacingOccurrences(of: ":", with: "")
    }
}

extension ServiceConfiguration {
    /// Where xfconf's channel files are, for this process's environment.
    var xfconfChannelFiles: XfconfChannelFiles {
        XfconfChannelFiles(environment: ProcessInfo.processInfo.environment, storeDirectory: storeDirectory)
    }
}

/// Why a channel file could not be moved aside: the system's reason.
struct XfconfFileError: Error, CustomStringConvertible {
    var reason: String
    var description: String { reason }
}
