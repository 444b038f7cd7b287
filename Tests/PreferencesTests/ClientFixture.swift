import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport

extension ServiceFixture {
    /// A preferences object on the fixture's bus.
    func preferences(_ identifier: String, arguments: [String] = [], environment: [String: String] = [:]) -> Preferences {
        Preferences(applicationIdentifier: identifier, arguments: arguments, environment: environment, busAddress: bus.address)
    }

    /// Runs the probe (a second process using the library) with this bus as its session bus.
    func probe(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        try run(ServiceFixture.executable("preferences-probe").path, arguments)
    }

    /// Starts the probe without waiting for it, its output going to a file.
    func startProbe(_ arguments: [String], output: URL) throws -> Process {
        let process = Process()
        process.executableURL = ServiceFixture.executable("preferences-probe")
        process.arguments = arguments
        process.environment = helperEnvironment.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { $1 }
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: output)
        try process.run()
        return process
    }
}
