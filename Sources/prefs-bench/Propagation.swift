import BenchmarkKit
import DBus
import Foundation
import Preferences
import PreferencesProtocol

let propagationDomain = "bench.prop"

/// The child side: observes `p` in the propagation domain through the client library and
/// prints "ready", then one line per change: the monotonic time the observer ran, in ns.
func runObserverChild(bus: String, count: Int) -> Int32 {
    let preferences = Preferences(applicationIdentifier: propagationDomain, arguments: [], environment: [:], busAddress: bus)
    let seen = DispatchSemaphore(value: 0)
    let observation = preferences.observe("p") { _ in
        let stamp = now()
        FileHandle.standardOutput.write(Data("\(Int64(stamp * 1e9))\n".utf8))
        seen.signal()
    }
    FileHandle.standardOutput.write(Data("ready\n".utf8))
    for _ in 0..<count where seen.wait(timeout: .now() + 30) == .timedOut { return 3 }
    observation.cancel()
    return 0
}

/// The parent side: writes `p` (a durable `Write` through our DBus module) and times until the
/// observer in the child process runs, from the call and from its reply; interleaved with
/// Ping round trips to prefsd.
func measurePropagation(_ connection: DBusConnection, bus: String, budget: Budget, directory: URL)
    throws -> (propagation: Figure, afterReply: Figure, ping: Figure)
{
    _ = try connection.callBlocking(Calls.write(propagationDomain, "p", 0))
    let me = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath().path
    let child = try Child(
        me, ["--observer-child", "--address", bus, "--child-count", "\(budget.count)"],
        log: directory.appendingPathComponent("observer.log"))
    defer { child.stop(grace: 2) }
    guard child.readLine(timeout: 30) == "ready" else { throw BenchError("the observer child did not start") }
    let ping = Calls.ping(PreferencesBus.busName)
    var value: Int64 = 0
    let lanes = try sample(budget, 3) { _ in
        let pingTime = try connection.timed(ping)
        value += 1
        let start = now()
        _ = try connection.callBlocking(Calls.write(propagationDomain, "p", value))
        let replied = now()
        guard let line = child.readLine(timeout: 10), let stamp = Int64(line) else {
            throw BenchError("the observer child did not see write \(value)")
        }
        // Both clocks are CLOCK_MONOTONIC, shared by the two processes; the observer may run
        // before the reply reaches the writer (a difference below zero).
        return [pingTime, Double(stamp) * 1e-9 - start, Double(stamp) * 1e-9 - replied]
    }
    return (Figure(lanes[1]), Figure(lanes[2]), Figure(lanes[0]))
}
