import BenchmarkKit
import BusTestSupport
import DBus
import Foundation

/// Only the cold start: prefsd launched on a store of 1,000 domains of 100 keys, timed to
/// its first `Read` of a stored key answered and to a durable `Write` right after, several
/// rounds; beside `prefsd --version` (the
/// process start alone), and beside another prefsd build (`--compare-prefsd`) taking turns,
/// each on a store it filled itself.
struct ColdStartBench {
    var quick: Bool
    /// Another prefsd executable to time in the same rounds, or `nil`.
    var other: String?
    /// Launches of each executable.
    var rounds: Int

    static let domains = 1_000
    static let perDomain = 100

    func run() throws {
        let loadBefore = Machine.load
        let work = try makeTemporaryDirectory("prefs-bench-cold")
        defer { try? FileManager.default.removeItem(at: work) }
        let executables = [try siblingExecutable("prefsd")] + (other.map { [$0] } ?? [])
        let bus = try PrivateBus()
        defer { bus.stop() }
        let probe = try DBusConnection.connect(address: bus.address)
        defer { probe.close() }

        var stores: [URL] = []
        for (index, prefsd) in executables.enumerated() {
            log("filling a store of \(Self.domains * Self.perDomain) keys through \(prefsd)")
            let store = work.appendingPathComponent("store-\(index)")
            try fillColdStore(
                prefsd: prefsd, bus: bus.address, probe: probe, store: store, log: work,
                domains: Self.domains, perDomain: Self.perDomain)
            stores.append(store)
        }
        var startups = Array(repeating: [Double](), count: executables.count)
        var versions = Array(repeating: [Double](), count: executables.count)
        var peaks = Array(repeating: [Double](), count: executables.count)
        var wholes = Array(repeating: [Double](), count: executables.count)
        var wholePeaks = Array(repeating: [Double](), count: executables.count)
        var writes = Array(repeating: [Double](), count: executables.count)
        for round in 0..<rounds {
            // Alternate which goes first, so neither always follows the other.
            let order = round % 2 == 0 ? Array(executables.indices) : Array(executables.indices.reversed())
            for index in order {
                let version = try spawnTimed(
                    executables[index], ["--version"], environment: ProcessInfo.processInfo.environment,
                    output: work.appendingPathComponent("version.txt").path)
                versions[index].append(version.seconds)
                let sample = try launchCold(
                    prefsd: executables[index], bus: bus.address, probe: probe, store: stores[index], log: work,
                    domains: Self.domains, perDomain: Self.perDomain, value: Int64(round))
                startups[index].append(sample.startup)
                writes[index].append(sample.firstWrite)
                if let peak = sample.peakRSS { peaks[index].append(Double(peak)) }
                wholes[index].append(sample.whole)
                if let peak = sample.wholePeakRSS { wholePeaks[index].append(Double(peak)) }
            }
            log("round \(round + 1): " + executables.indices.map { Format.duration(startups[$0].last ?? 0) }.joined(separator: ", "))
        }

        print(
            "| prefsd | launch → first `Read` of a stored key, p50 (min–max) | peak RSS then, p50 | launch → a durable `Write` made right after it answered, p50 | launch → `Domains` answered after that (every domain loaded), p50 | peak RSS then, p50 | `prefsd --version`, p50 | rounds |"
        )
        print("| --- | --- | --- | --- | --- | --- | --- | --- |")
        func mebibytes(_ samples: [Double]) -> String {
            Summary(samples).map { "\(Format.format1($0.median / 1_048_576)) MiB" } ?? "–"
        }
        for index in executables.indices {
            guard let startup = Summary(startups[index]), let version = Summary(versions[index]), let whole = Summary(wholes[index]),
                let write = Summary(writes[index])
            else { continue }
            let range = "\(Format.duration(startup.minimum))–\(Format.duration(startups[index].max() ?? 0))"
            print(
                "| \(executables[index]) | \(Format.duration(startup.median)) (\(range)) | \(mebibytes(peaks[index])) | \(Format.duration(write.median)) | \(Format.duration(whole.median)) | \(mebibytes(wholePeaks[index])) | \(Format.duration(version.median)) | \(startup.count) |"
            )
        }
        print()
        print(
            "\(Self.domains * Self.perDomain) keys in \(Self.domains) domains, each store filled by its own prefsd. Load: \(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages). \(Machine.description)"
        )
    }
}
