import BusTestSupport
import Foundation

/// A small C program linking gio-2.0, compiled when the benchmark runs with `cc -O2` and
/// the flags of `pkg-config --cflags --libs gio-2.0` (Debian: libglib2.0-dev). Used by
/// `--gsettings` (``GSettingsBench``) and by the GDBus reference client (``ReferenceClient``).
enum GIOProgram {
    /// Writes `source` to `<directory>/<name>.c`, compiles it and returns the executable's path.
    /// - Throws: an error naming the step that failed (pkg-config and the package to install, cc) and its output.
    static func compile(_ source: String, named name: String, in directory: URL) throws -> String {
        try compileCProgram(source, named: name, in: directory, library: "gio-2.0", package: "libglib2.0-dev")
    }

    /// Throws unless a GSettings program exited 0 with the backend it was given: GLib falls
    /// back to its memory backend with a warning when the named one is not found, and a
    /// figure measured that way would carry the wrong name.
    static func checkBackend(_ result: (status: Int32, stdout: String, stderr: String), _ backend: String) throws {
        try check(result, "\(backend): write")
        guard !result.stderr.contains("GSettings backend") && !result.stderr.contains("Can't find module") else {
            throw BenchError("\(backend): GLib did not use the \(backend) backend: \(result.stderr)")
        }
    }

    /// Throws unless the command exited 0.
    static func check(_ result: (status: Int32, stdout: String, stderr: String), _ what: String) throws {
        guard result.status == 0 else { throw BenchError("\(what) failed (status \(result.status)): \(result.stderr)") }
    }
}
