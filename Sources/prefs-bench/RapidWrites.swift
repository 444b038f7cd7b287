import BenchmarkKit
import Foundation
import Preferences
import PreferencesProxy
import Synchronization

/// What a tight loop of `set` calls of one key costs the disk (a window saving its size on
/// every resize): the library merges the sets of a domain made while one write is in flight.
struct RapidWrites {
    /// `set(_:forKey:)` calls made.
    var calls: Int
    /// Commits they became: `Changed` signals a second connection received.
    var commits: Int
    /// Seconds of the loop of calls, and of the loop plus `synchronize()`.
    var loopSeconds: Double
    var totalSeconds: Double

    /// The report's row.
    var row: [String] {
        [
            "\(calls.formatted()) `set` calls of one key in a tight loop (library), then `synchronize()`",
            "\(commits) commits, \(Format.format1(totalSeconds)) s (loop \(Format.format1(loopSeconds)) s)",
            "one commit per call (no merging)", "\(calls.formatted()) commits",
            "\(Format.format1(Double(calls) / Double(max(commits, 1)))) calls/commit",
            "≤ 500 commits", commits <= 500 ? "met" : "**missed**",
        ]
    }
}

/// Makes `calls` sets of one key through the library and counts the commits they became.
func measureRapidWrites(bus: String, calls: Int) throws -> RapidWrites {
    let domain = "bench.rapid"
    let counter = try PreferencesProxy.connect(address: bus)
    defer { counter.close() }
    let commits = Mutex(0)
    // The signals as prefsd sent them: one event per commit.
    let subscription = try counter.observeBlocking([domain], resolving: false) { event in
        guard case .changed = event else { return }
        commits.withLock { $0 += 1 }
    }
    defer { subscription.cancel() }

    let preferences = Preferences(applicationIdentifier: domain, arguments: [], environment: [:], busAddress: bus)
    _ = preferences.integer(forKey: "Width")  // loaded, as an application's own domain is
    let start = now()
    for width in 1...calls { preferences.set(width, forKey: "Width") }
    let loopEnd = now()
    guard preferences.synchronize() else { throw BenchError("synchronize() failed after the rapid writes") }
    let end = now()

    // Once the sentinel is written and the counter caught up, every earlier commit has been counted.
    try counter.performBlocking(PreferencesCall.write(domain, "Sentinel", .integer(1)))
    guard counter.catchUpBlocking() else { throw BenchError("prefsd did not answer the catch-up after the rapid writes") }
    let width = try counter.performBlocking(PreferencesCall.read(domain, "Width"))
    guard width == .integer(Int64(calls)) else {
        throw BenchError("the last value written (\(calls)) is not what prefsd holds: \(width)")
    }
    return RapidWrites(
        calls: calls, commits: commits.withLock { $0 } - 1,
        loopSeconds: loopEnd - start, totalSeconds: end - start)
}
