import Foundation
import PrefsdTestSupport

/// Debian's dconf on a test's private bus: `dconf-service` started by the bus (activation)
/// with its own `XDG_CONFIG_HOME` and `XDG_RUNTIME_DIR`, so the user's real dconf is never
/// touched, and the environment that makes `gsettings` and `dconf` use it.
struct DconfFixture {
    /// The GSettings fixture whose bus and schemas the dconf programs share.
    let settings: GSettingsFixture
    /// The directory holding `config/` and `run/`.
    let directory: URL

    init(settings: GSettingsFixture, service: ServiceFixture) throws {
        self.settings = settings
        directory = settings.directory.appendingPathComponent("dconf")
        let run = directory.appendingPathComponent("run")
        for made in [directory.appendingPathComponent("config"), run] {
            try FileManager.default.createDirectory(at: made, withIntermediateDirectories: true)
        }
        try FileManager.default.setAttributes([.posixPermissions: 0o700], ofItemAtPath: run.path)
        let serviceFile = """
            [D-BUS Service]
            Name=ca.desrt.dconf
            Exec=/usr/bin/env XDG_CONFIG_HOME=\(directory.path)/config XDG_RUNTIME_DIR=\(run.path) /usr/libexec/dconf-service
            """
        try serviceFile.write(to: service.bus.serviceDirectory.appendingPathComponent("ca.desrt.dconf.service"), atomically: true, encoding: .utf8)
        // Helper processes load GIO modules from an empty directory (`helperEnvironment`):
        // this one holds dconf's module alone, so `GSETTINGS_BACKEND=dconf` finds it and no
        // other module of the machine loads.
        try DconfGIOModule.link(into: directory.appendingPathComponent("gio-modules"))
    }

    /// The GSettings fixture's environment with dconf as the backend and dconf's own directories.
    var environment: [String: String] {
        settings.environment.merging([
            "GSETTINGS_BACKEND": "dconf",
            "GIO_MODULE_DIR": directory.appendingPathComponent("gio-modules").path,
            "XDG_CONFIG_HOME": directory.appendingPathComponent("config").path,
            "XDG_RUNTIME_DIR": directory.appendingPathComponent("run").path,
        ]) { $1 }
    }

    /// Runs `gsettings` against dconf.
    func gsettings(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand("gsettings", arguments, environment: environment)
    }

    /// Runs `dconf` (Debian's `dconf-cli`), with `input` as its standard input when given.
    func dconf(_ arguments: [String], input: String? = nil) throws -> (status: Int32, stdout: String, stderr: String) {
        guard let input else { return try runCommand("dconf", arguments, environment: environment) }
        let file = directory.appendingPathComponent("stdin-\(UUID().uuidString)")
        try input.write(to: file, atomically: true, encoding: .utf8)
        return try runCommand("/bin/sh", ["-c", "exec dconf \"$@\" < \"\(file.path)\"", "dconf"] + arguments, environment: environment)
    }

    /// Ends the `dconf-service` the bus started (it outlives its bus otherwise): asks the
    /// bus for the process owning `ca.desrt.dconf` and kills it (it ignores SIGTERM once its
    /// bus is gone, and the test is done with it by then). Call it before the
    /// bus goes away.
    func stop() {
        guard let address = settings.busAddress, let pid = PrivateBus.processID(owning: "ca.desrt.dconf", onBusAt: address) else { return }
        kill(pid, SIGKILL)
    }

    /// Runs the built `prefs`, seeing both prefsd and this dconf.
    func prefs(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try runCommand(ServiceFixture.prefsBinary.path, arguments, environment: environment)
    }
}
