import Foundation
import PreferencesRoaming

/// Where the roaming folder is and how the service treats it (`prefsd --roaming-dir` and
/// the test hooks).
public struct RoamingConfiguration: Sendable {
    /// The folder the sync engine keeps the same on every machine.
    public var directory: URL
    /// The file holding the machine ID the identity is derived from (`/etc/machine-id`;
    /// tests give each instance its own).
    public var machineIDFile: URL
    /// Added to the wall clock, in milliseconds (a test hook: a machine whose clock is off).
    public var clockOffsetMilliseconds: Int64 = 0
    /// A pause before and after each commit of another machine's changes, in milliseconds
    /// (a test hook: widens the window in which a test kills prefsd mid-apply).
    public var applyDelayMilliseconds: Int = 0
    /// The files' bounds.
    public var limits: RoamingLimits = .default

    /// Makes a configuration.
    public init(directory: URL, machineIDFile: URL = URL(fileURLWithPath: "/etc/machine-id")) {
        self.directory = directory
        self.machineIDFile = machineIDFile
    }

    /// The default folder: `$XDG_DATA_HOME/prefsd/roaming`, or `~/.local/share/prefsd/roaming`.
    public static func defaultDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let data = environment["XDG_DATA_HOME"], data.hasPrefix("/") {
            return URL(fileURLWithPath: data, isDirectory: true).appendingPathComponent("prefsd/roaming", isDirectory: true)
        }
        let home =
            environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".local/share/prefsd/roaming", isDirectory: true)
    }
}
