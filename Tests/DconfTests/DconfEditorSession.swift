import DesktopTestSupport
import Foundation
import PrefsdTestSupport
import Synchronization

/// Debian's dconf-editor (GTK 3) in a test: its window on a display and accessibility bus of
/// the test's own (`TestDisplay`), a dconf client of the ``DconfServer``'s private bus, where
/// prefsd owns dconf's name, with the server's `XDG_CONFIG_HOME`, `XDG_RUNTIME_DIR` and
/// `DCONF_PROFILE`, and the AT-SPI driver to work the window with.
final class DconfEditorSession: Sendable {
    let server: DconfServer
    let display: TestDisplay
    private let editor = Mutex<Process?>(nil)

    /// Where Debian's dconf-editor package installs it.
    static let executable = "/usr/bin/dconf-editor"

    /// Starts the display; throws, saying what to install, when dconf-editor, Xvfb or AT-SPI
    /// is missing. Turns dconf-editor's first-run warning off in the server's database (its
    /// GSettings key `ca.desrt.dconf-editor.settings show-warning`).
    init(server: DconfServer) throws {
        guard FileManager.default.isExecutableFile(atPath: Self.executable) else {
            throw FixtureError("dconf-editor is not installed (\(Self.executable)): run scripts/install-dependencies")
        }
        self.server = server
        display = try TestDisplay()
        // dconf-editor keeps its own settings through GSettings: dconf's module alone, from a
        // directory of its own (helper processes load GIO modules from an empty one).
        try DconfGIOModule.link(into: directory.appendingPathComponent("gio-modules"))
        for made in ["data", "cache", "state"] {
            try FileManager.default.createDirectory(at: directory.appendingPathComponent(made), withIntermediateDirectories: true)
        }
        let warning = try server.dconf(["write", "/ca/desrt/dconf-editor/show-warning", "false"])
        guard warning.status == 0 else { throw FixtureError("dconf write show-warning false: \(warning.stderr)") }
    }

    deinit {
        // The editor goes before its display (ended when `display` is released).
        quit()
    }

    /// The editor's own files (its GIO module directory, data, cache, log).
    var directory: URL { server.service.bus.directory.appendingPathComponent("dconf-editor") }

    /// The editor's environment: the server's bus and dconf directories, the display, and
    /// private XDG data, cache and state directories (never the user's).
    var environment: [String: String] {
        display.environment.merging(server.environment) { $1 }.merging([
            "GSETTINGS_BACKEND": "dconf", "GIO_MODULE_DIR": directory.appendingPathComponent("gio-modules").path,
            "XDG_DATA_DIRS": "/usr/local/share:/usr/share", "XDG_DATA_HOME": directory.appendingPathComponent("data").path,
            "XDG_CACHE_HOME": directory.appendingPathComponent("cache").path,
            "XDG_STATE_HOME": directory.appendingPathComponent("state").path,
        ]) { $1 }
    }

    /// Starts dconf-editor showing `path` (a folder ending in `/`, or a key).
    func launch(_ path: String) throws {
        quit()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: Self.executable)
        process.arguments = [path]
        process.environment = helperEnvironment.merging(environment) { $1 }.filter { !$0.value.isEmpty }
        process.standardOutput = FileHandle.nullDevice
        _ = FileManager.default.createFile(atPath: logFile.path, contents: nil)
        process.standardError = try FileHandle(forWritingTo: logFile)
        try process.run()
        editor.withLock { $0 = process }
    }

    /// The editor's standard error.
    var logFile: URL { directory.appendingPathComponent("dconf-editor.log") }

    /// The editor's warnings so far, for a failure's message.
    var log: String { (try? String(contentsOf: logFile, encoding: .utf8)) ?? "" }

    /// Ends the editor with SIGKILL: it has nothing to save that a test reads (each value
    /// is stored when applied), and a process started from a test's thread may have SIGTERM
    /// blocked, so SIGTERM could only be waited out.
    func quit() {
        guard
            let process = editor.withLock({ current -> Process? in
                defer { current = nil }; return current
            })
        else { return }
        guard process.isRunning else { return }
        kill(process.processIdentifier, SIGKILL)
        _ = waitForExit(of: process)
    }

    /// Runs one step of the AT-SPI driver on dconf-editor's window.
    func drive(_ arguments: [String]) throws -> (succeeded: Bool, output: String) {
        try AccessibilityDriver(application: "dconf-editor", display: display, environment: environment).drive(arguments)
    }

    /// Waits until `read` returns `expected` (at most 20 s); returns the last value read.
    func waitFor(_ expected: String, _ read: () throws -> String) async throws -> String {
        let deadline = ContinuousClock.now + .seconds(20)
        var last = try read()
        while last != expected, ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(50))
            last = try read()
        }
        return last
    }
}
