import Foundation

/// Compiles a small C program for a test or the benchmark: writes `source` to
/// `<directory>/<name>.c` and runs `cc -O2` with the flags of `pkg-config --cflags --libs
/// <library>`; returns the executable's path.
/// - Parameters:
///   - library: the pkg-config name of the one library the program links (`gio-2.0`, `dbus-1`).
///   - package: the Debian package that provides it, named in the error when pkg-config fails.
/// - Throws: ``BusTestSupportError`` naming the step that failed (pkg-config and the package
///   to install, or cc) with its output.
public func compileCProgram(_ source: String, named name: String, in directory: URL, library: String, package: String) throws -> String {
    let file = directory.appendingPathComponent("\(name).c")
    try source.write(to: file, atomically: true, encoding: .utf8)
    let executable = directory.appendingPathComponent(name).path
    let flags = try runCommand("pkg-config", ["--cflags", "--libs", library])
    guard flags.status == 0 else {
        throw BusTestSupportError.processFailed(
            "pkg-config \(library) failed (status \(flags.status)): install \(package) (scripts/install-dependencies). \(flags.stderr)")
    }
    let words = flags.stdout.split(whereSeparator: \.isWhitespace).map(String.init)
    let compiled = try runCommand("cc", ["-O2", "-o", executable, file.path] + words, timeout: .seconds(120))
    guard compiled.status == 0 else {
        throw BusTestSupportError.processFailed("cc \(name).c failed (status \(compiled.status)): \(compiled.stderr)")
    }
    return executable
}
