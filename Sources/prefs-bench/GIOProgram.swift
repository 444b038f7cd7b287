import BusTestSupport
import Foundation

/// A small C program linking gio-2.0, compiled when the benchmark runs with `cc -O2` and
/// the flags of `pkg-config --cflags --libs gio-2.0` (Debian: libglib2.0-dev). Used by
/// `--gsettings` (``GSettingsBench``) and by the GDBus reference client (``ReferenceClient``).
enum GIOProgram {
    /// Writes `source` to `<directory>/<name>.c`, compiles it and returns the executable's path.
    /// - Throws: ``BenchError`` naming the step that failed (pkg-config, cc) and its output.
    static func compile(_ source: String, named name: String, in directory: URL) throws -> String {
        let file = directory.appendingPathComponent("\(name).c")
        try source.write(to: file, atomically: true, encoding: .utf8)
        let executable = directory.appendingPathComponent(name).path
        let flags = try runCommand("pkg-config", ["--cflags", "--libs", "gio-2.0"])
        try check(flags, "pkg-config gio-2.0 (install libglib2.0-dev)")
        let words = flags.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
        try check(runCommand("cc", ["-O2", "-o", executable, file.path] + words), "cc \(name).c")
        return executable
    }

    /// Throws unless the command exited 0.
    static func check(_ result: (status: Int32, stdout: String, stderr: String), _ what: String) throws {
        guard result.status == 0 else { throw BenchError("\(what) failed (status \(result.status)): \(result.stderr)") }
    }
}
