import DBus
import Foundation
import PreferencesProxy

/// Fills a fresh store with `domains` × `perDomain` keys through a prefsd, stops it, then
/// launches prefsd on that store again: time to the first `Read` of a stored key answered,
/// and its peak RSS.
func measureColdStart(
    prefsd: String, bus: String, probe: DBusConnection, directory: URL,
    domains: Int, perDomain: Int
) throws -> (startup: Double, peakRSS: Int?, filled: Int) {
    let store = directory.appendingPathComponent("cold-store")
    try fillColdStore(prefsd: prefsd, bus: bus, probe: probe, store: store, log: directory, domains: domains, perDomain: perDomain)
    let sample = try launchCold(prefsd: prefsd, bus: bus, probe: probe, store: store, log: directory, domains: domains, perDomain: perDomain)
    return (sample.startup, sample.wholePeakRSS, domains * perDomain)
}

/// Fills a fresh store at `store` with `domains` domains `bench.cold<n>` of `perDomain` keys
/// `k<n>` each (one `Apply` per domain) through a prefsd of its own, and stops it.
func fillColdStore(
    prefsd: String, bus: String, probe: DBusConnection, store: URL, log: URL, domains: Int, perDomain: Int
) throws {
    try FileManager.default.createDirectory(at: store, withIntermediateDirectories: true)
    let filler = try PrefsdInstance(
        executable: prefsd, bus: bus, store: store,
        log: log.appendingPathComponent("prefsd-fill.log"), probe: probe)
    defer { filler.stop() }
    for domain in 0..<domains {
        _ = try probe.callBlocking(Calls.apply("bench.cold\(domain)", keys: 0..<perDomain), timeout: .seconds(120))
    }
}

/// Launches prefsd on a store ``fillColdStore(prefsd:bus:probe:store:log:domains:perDomain:)``
/// filled: the seconds to the first `Read` of a stored key answered with its value, and the
/// peak RSS then; the seconds from launch to a durable `Write` made right after it answered
/// (`value`: a new one each launch, so that it is a change); then the seconds from launch to
/// a `Domains` answered after it (which needs every domain loaded), and the peak RSS then;
/// stops it.
func launchCold(
    prefsd: String, bus: String, probe: DBusConnection, store: URL, log: URL, domains: Int, perDomain: Int,
    value: Int64 = 0
) throws -> (startup: Double, peakRSS: Int?, firstWrite: Double, whole: Double, wholePeakRSS: Int?) {
    let launched = now()
    let instance = try PrefsdInstance(
        executable: prefsd, bus: bus, store: store,
        log: log.appendingPathComponent("prefsd-cold.log"), probe: probe,
        firstRead: Calls.read("bench.cold\(domains / 2)", "k\(perDomain / 2)"))
    defer { instance.stop() }
    let peak = instance.child.peakResidentBytes()
    _ = try probe.callBlocking(Calls.write("bench.cold.written", "k", value), timeout: .seconds(60))
    let firstWrite = now() - launched
    _ = try probe.callBlocking(PreferencesCall.domains().message, timeout: .seconds(60))
    return (instance.startup, peak, firstWrite, now() - launched, instance.child.peakResidentBytes())
}
