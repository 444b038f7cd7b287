import Foundation
import Preferences
import PreferencesModel
import PrefsdTestSupport

/// Waits until `condition` holds, polling, for at most `timeout`.
func eventually(timeout: Duration = .seconds(10), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

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
        process.environment = ProcessInfo.processInfo.environment.merging(["DBUS_SESSION_BUS_ADDRESS": bus.address]) { $1 }
        _ = FileManager.default.createFile(atPath: output.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: output)
        try process.run()
        return process
    }

    /// A managed directory the test owns, with the given domains forced.
    static func managedDirectory(_ files: [String: [String: PropertyListValue]]) throws -> URL {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-managed-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        for (domain, values) in files {
            try PropertyListValue.dictionary(values).xmlPropertyListData().write(to: directory.appendingPathComponent("\(domain).plist"))
        }
        return directory
    }
}
