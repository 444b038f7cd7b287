import Foundation

/// dconf's GSettings backend, the GIO module Debian's `dconf-gsettings-backend` installs in
/// GLib's module directory. Helper processes load GIO modules from an empty directory
/// (``helperEnvironment``), so a test or benchmark that runs GSettings on dconf links the
/// module into a directory of its own with ``link(into:)``.
public enum DconfGIOModule {
    /// The module's file name.
    public static let fileName = "libdconfsettings.so"

    /// The module is not installed, or GLib's module directory could not be found.
    public struct Missing: Error, CustomStringConvertible {
        /// What was looked for, and what to install.
        public let description: String
    }

    /// The installed module.
    /// - Throws: ``Missing`` when it is not in GLib's module directory.
    public static func installed() throws -> URL {
        let query = try runCommand("pkg-config", ["--variable=giomoduledir", "gio-2.0"])
        let directory = query.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        let module = URL(fileURLWithPath: directory).appendingPathComponent(fileName)
        guard query.status == 0, !directory.isEmpty, FileManager.default.fileExists(atPath: module.path) else {
            throw Missing(
                description:
                    "dconf's GSettings module \(fileName) is not in GLib's module directory '\(directory)' (pkg-config: \(query.stderr)); install dconf-gsettings-backend and libglib2.0-dev (scripts/install-dependencies)"
            )
        }
        return module
    }

    /// Links the installed module into `directory` (made if missing), a directory for
    /// `GIO_MODULE_DIR` or `GIO_EXTRA_MODULES`.
    /// - Throws: ``Missing`` when the module is not installed; the file system's error when
    ///   the directory or the link cannot be made.
    public static func link(into directory: URL) throws {
        let module = try installed()
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(at: directory.appendingPathComponent(fileName), withDestinationURL: module)
    }
}
