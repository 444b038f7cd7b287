import Foundation
import PreferencesModel

/// The domains prefsd had snapshots of when it last stopped, kept beside the store
/// (`snapshot-domains`, one name a line), so that the next prefsd writes their snapshots
/// as soon as it starts: the domains a session reads at its start are then mapped by
/// their first GSettings program instead of waited for on the bus. It is only a hint: a
/// missing, unreadable or damaged list means no snapshot is written ahead.
struct SnapshotDomainList {
    /// The list's file.
    let path: String

    /// The list kept in the store directory `storeDirectory`.
    init(storeDirectory: URL) {
        path = storeDirectory.appendingPathComponent("snapshot-domains").path
    }

    /// The names on the list that are domain names, at most `limit` of them; none when the
    /// file is missing, larger than a list of `limit` names can be, or unreadable. A list
    /// readable by others is made private (mode 0600) first.
    func read(limit: Int) -> [String] {
        guard let handle = FileHandle(forReadingAtPath: path) else { return [] }
        defer { try? handle.close() }
        // Private like every file of the store: narrowed if someone opened it up.
        var status = stat()
        if fstat(handle.fileDescriptor, &status) == 0, status.st_mode & 0o7777 != 0o600 { fchmod(handle.fileDescriptor, 0o600) }
        // A name is at most 255 bytes, and a newline ends each.
        let most = limit * 256
        guard let data = try? handle.read(upToCount: most + 1), data.count <= most else { return [] }
        let names = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        return Array(names.filter { (try? DomainName($0))?.rawValue == $0 }.prefix(limit))
    }

    /// Replaces the list with `domains` (written aside, then renamed in); `false` when it
    /// could not be written.
    @discardableResult
    func write(_ domains: [String]) -> Bool {
        let aside = path + ".new"
        let text = domains.map { $0 + "\n" }.joined()
        guard FileManager.default.createFile(atPath: aside, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]) else {
            return false
        }
        return rename(aside, path) == 0
    }
}
