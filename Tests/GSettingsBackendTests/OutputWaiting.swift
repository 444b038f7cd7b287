import Foundation
import PrefsdTestSupport

/// Waits until `text` appears in `file`, the output of a program running in the background
/// (`gsettings monitor`, a PyGObject watcher), looking every `interval` and calling `poke`
/// between looks; throws with the output when it has not appeared within `timeout`.
func waitFor(
    _ text: String, in file: URL, timeout: Duration = .seconds(30), every interval: Duration = .milliseconds(50),
    while poke: () throws -> Void = {}
) async throws {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if let output = try? String(contentsOf: file, encoding: .utf8), output.contains(text) { return }
        try poke()
        try await Task.sleep(for: interval)
    }
    let output = (try? String(contentsOf: file, encoding: .utf8)) ?? ""
    throw FixtureError("\"\(text)\" did not appear within \(timeout); the output was:\n\(output)")
}
