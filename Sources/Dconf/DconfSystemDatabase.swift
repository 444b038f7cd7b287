import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The keyfile directory of a dconf system database (`/etc/dconf/db/NAME.d`), as `dconf
/// update` reads it: its keyfiles, and the files of its `locks/` folder.
public struct DconfSystemDatabase: Sendable, Equatable {
    /// The directory (`/etc/dconf/db/local.d`), as given; its files' paths start with it.
    public let path: String

    /// The database whose keyfiles are in the directory `path`.
    public init(path: String) {
        var trimmed = Substring(path)
        while trimmed.count > 1, trimmed.hasSuffix("/") { trimmed = trimmed.dropLast() }
        self.path = String(trimmed)
    }

    /// The database `name` of the database directory `databases` (`/etc/dconf/db`): its
    /// keyfiles are in `NAME.d`.
    public init(name: String, in databases: URL) {
        self.init(path: databases.appendingPathComponent(name + ".d", isDirectory: true).path)
    }

    /// The directory of the machine's system databases.
    public static let defaultDirectory = URL(fileURLWithPath: "/etc/dconf/db", isDirectory: true)

    /// The paths of its keyfiles, in the order `dconf update` reads them (a later file wins).
    public var keyfiles: [String] { Self.regularFiles(in: path) }

    /// The paths of the files of its `locks/` folder.
    public var lockFiles: [String] { Self.regularFiles(in: path + "/locks") }

    /// The regular files of the directory `directory` whose names do not start with `.`,
    /// by name (byte order), as `dconf update` takes them; none when it cannot be listed.
    public static func regularFiles(in directory: String) -> [String] {
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return [] }
        return names.filter { !$0.hasPrefix(".") }
            .sorted { $0.utf8.lexicographicallyPrecedes($1.utf8) }
            .map { (directory == "/" ? "" : directory) + "/" + $0 }
            .filter { path in
                var info = stat()
                return stat(path, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG
            }
    }
}
