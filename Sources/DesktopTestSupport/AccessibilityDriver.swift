import BusTestSupport
import Foundation

/// The AT-SPI driver (`atspi-driver.py`, a python3 pyatspi script beside this file) working
/// one program's window on a ``TestDisplay``, as a screen reader would: each step finds
/// widgets by role and accessible name, waits for a state or acts, and says what it saw.
public struct AccessibilityDriver: Sendable {
    /// The program's name on the accessibility bus (its `g_get_prgname()`).
    public let application: String
    /// The display and accessibility bus the program is on.
    public let display: TestDisplay
    /// More environment for the driver (merged over the display's).
    public let environment: [String: String]

    /// The driver script's path in the source tree.
    public static let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("atspi-driver.py").path

    /// A driver for `application`'s windows on `display`.
    public init(application: String, display: TestDisplay, environment: [String: String] = [:]) {
        self.application = application
        self.display = display
        self.environment = environment
    }

    /// Runs one step of the driver (`atspi-driver.py --application NAME ARGUMENTS…`); the
    /// step's output says what it saw.
    public func drive(_ arguments: [String]) throws -> (succeeded: Bool, output: String) {
        let result = try runCommand(
            "/usr/bin/python3", [Self.script, "--application", application] + arguments,
            environment: display.environment.merging(environment) { $1 }.filter { !$0.value.isEmpty }, timeout: .seconds(60))
        return (result.status == 0, result.stdout + result.stderr)
    }
}
