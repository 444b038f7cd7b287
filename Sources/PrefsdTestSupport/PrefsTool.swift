import Foundation

extension ServiceFixture {
    /// The built `prefs` beside the test bundle, or `$PREFS_BINARY`.
    public static var prefsBinary: URL {
        if let path = ProcessInfo.processInfo.environment["PREFS_BINARY"] {
            return URL(fileURLWithPath: path)
        }
        let me = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath()
        var directory = me.deletingLastPathComponent()
        // The test bundle may be a directory (`….xctest/…`) or a file beside prefs.
        while !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent("prefs").path),
            directory.path != "/"
        {
            directory.deleteLastPathComponent()
        }
        return directory.appendingPathComponent("prefs")
    }

    /// Runs the built `prefs` with the fixture's bus as the session bus.
    public func prefs(_ arguments: String...) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(Self.prefsBinary.path, arguments)
    }

    /// Runs the built `prefs` with `arguments` and `input` as its standard input.
    public func prefs(_ arguments: [String], input: Data) throws -> (status: Int32, stdout: String, stderr: String) {
        let file = bus.directory.appendingPathComponent("stdin-\(UUID().uuidString)")
        try input.write(to: file)
        defer { try? FileManager.default.removeItem(at: file) }
        return try run("/bin/sh", ["-c", "exec \"$0\" \"$@\" < \"\(file.path)\"", Self.prefsBinary.path] + arguments)
    }
}
