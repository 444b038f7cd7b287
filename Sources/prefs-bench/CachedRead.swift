import BenchmarkKit
import DBus
import Foundation
import Preferences
import PreferencesProxy

/// Nanoseconds per call of `read`: each batch of `batch` calls is timed as a whole; the
/// summary is over at most `batches` batches and `seconds` seconds.
func nanosecondsPerCall(batch: Int, batches: Int, seconds: Double, _ read: () -> Int) -> (summary: Summary, sink: Int) {
    var sink = 0
    for _ in 0..<batch { sink &+= read() }  // warm up
    let lanes = sample(Budget(count: batches, seconds: seconds)) { _ in
        let start = now()
        for _ in 0..<batch { sink &+= read() }
        return [(now() - start) / Double(batch) * 1e9]
    }
    return (Summary(lanes[0])!, sink)
}

/// A cached `Preferences.string(forKey:)` hit and Foundation's `UserDefaults.string(forKey:)`
/// hit, in this process. UserDefaults keeps its files under the temporary XDG_CONFIG_HOME
/// the benchmark set at launch.
func measureCachedReads(bus: String, quick: Bool) throws -> (ours: Summary, foundation: Summary) {
    let connection = try DBusConnection.connect(address: bus)
    defer { connection.close() }
    _ = try connection.callBlocking(PreferencesCall.write("bench.cached", "greeting", .string("hello, world")).message)
    let preferences = Preferences(applicationIdentifier: "bench.cached", arguments: [], environment: [:], busAddress: bus)
    guard preferences.string(forKey: "greeting") == "hello, world" else {
        throw BenchError("Preferences did not read back the value written")
    }
    let batches = quick ? 50 : 300
    let ours = nanosecondsPerCall(batch: 10_000, batches: batches, seconds: quick ? 2 : 10) {
        preferences.string(forKey: "greeting")?.utf8.count ?? 0
    }
    guard let defaults = UserDefaults(suiteName: "prefs-bench") else { throw BenchError("no UserDefaults suite") }
    defaults.set("hello, world", forKey: "greeting")
    guard defaults.string(forKey: "greeting") == "hello, world" else { throw BenchError("UserDefaults lost the value") }
    let foundation = nanosecondsPerCall(batch: 10_000, batches: batches, seconds: quick ? 2 : 10) {
        defaults.string(forKey: "greeting")?.utf8.count ?? 0
    }
    defaults.removeObject(forKey: "greeting")
    if ours.sink == 42 && foundation.sink == 42 { print("") }  // keep the reads alive
    return (ours.summary, foundation.summary)
}
