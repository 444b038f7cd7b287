import DBus
import Foundation

/// Fills a fresh store with `domains` × `perDomain` keys through a prefsd, stops it, then
/// launches prefsd on that store again: time to the first `Read` answered, and its peak RSS.
func measureColdStart(
    prefsd: String, bus: String, probe: DBusConnection, directory: URL,
    domains: Int, perDomain: Int
) throws -> (startup: Double, peakRSS: Int?, filled: Int) {
    let store = directory.appendingPathComponent("cold-store")
    try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
    let filler = try PrefsdInstance(
        executable: prefsd, bus: bus, store: store,
        log: directory.appendingPathComponent("prefsd-fill.log"), probe: probe)
    for domain in 0..<domains {
        _ = try probe.callBlocking(Calls.apply("bench.cold\(domain)", keys: 0..<perDomain), timeout: .seconds(120))
    }
    filler.stop()
    let instance = try PrefsdInstance(
        executable: prefsd, bus: bus, store: store,
        log: directory.appendingPathComponent("prefsd-cold.log"), probe: probe)
    defer { instance.stop() }
    // The first answer must be a real value from the store.
    _ = try probe.callBlocking(Calls.read("bench.cold\(domains / 2)", "k\(perDomain / 2)"))
    return (instance.startup, instance.child.peakResidentBytes(), domains * perDomain)
}
