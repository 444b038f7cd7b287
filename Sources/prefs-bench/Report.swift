import BenchmarkKit

/// Everything measured in one run, and its rendering as Markdown.
struct Report {
    let machine: String
    let quick: Bool
    var load = ""
    var notes: [String] = []
    var sizes: [SizeResult] = []
    var concurrency: [(writers: Int, prefsd: Double, dconf: Double?)] = []
    var cached: (ours: Summary, foundation: Summary)?
    var propagation: (propagation: Figure, ping: Figure)?
    var coldStart: (startup: Double, peakRSS: Int?, filled: Int)?
    var rapidWrites: RapidWrites?
    var reference: ReferenceReads?
    var mainPeakRSS: Int?
    var mainKeys = 0

    private func verdict(_ met: Bool?) -> String {
        met.map { $0 ? "met" : "**missed**" } ?? "–"
    }

    private static func anchorText(_ figure: Figure) -> String {
        switch figure {
        case let .missing(reason): return reason.isEmpty ? "–" : reason
        case let .measured(summary): return figure.text + " (n=\(summary.count))"
        }
    }

    // Swift 6.3.1's CopyPropagation pass crashes on this function in release builds
    // ("Found ownership error"); it runs once, so it is simply left unoptimised.
    @_optimize(none)
    func render() -> String {
        var table = MarkdownTable(header: ["figure", "prefsd p50 / p99", "anchor", "anchor p50 / p99", "ratio (p50)", "target", "result"])
        let emptyWrite = sizes.first { $0.keys == 0 }?.write.summary?.median
        for row in sizes {
            let ratio = medianRatio(row.read.summary, row.ping.summary)
            table.add(["`Read`, \(row.keys) keys", row.read.text + " (n=\(row.read.summary?.count ?? 0))",
                       "`Peer.Ping` to prefsd", row.ping.text,
                       ratio.map { "Read/Ping \(Format.ratio($0))" } ?? "–", "≤ 1.3×", verdict(ratio.map { $0 <= 1.3 })])
        }
        if let reference { table.add(reference.row) }
        for row in sizes {
            let speedup = medianRatio(row.dconfWrite.summary, row.write.summary)
            var target = "–"
            var met: Bool?
            if row.keys == 10_000 {
                target = "dconf/prefsd ≥ 100×"
                met = speedup.map { $0 >= 100 }
            }
            if row.keys == 100_000, let empty = emptyWrite, let here = row.write.summary?.median {
                target = "≤ 1.5× write at 0 keys (\(Format.ratio(here / empty)))"
                met = here / empty <= 1.5
            }
            let dconfText = Self.anchorText(row.dconfWrite)
            table.add(["durable `Write`, \(row.keys) keys", row.write.text + " (n=\(row.write.summary?.count ?? 0))",
                       "dconf `Change`" + (row.dconfKeys.map { $0 >= row.keys ? ", \(row.keys) keys" : "" } ?? ""),
                       dconfText, speedup.map { "dconf/prefsd \(Format.ratio($0))" } ?? "–", target, verdict(met)])
        }
        for row in concurrency {
            let ratio = row.dconf.map { row.prefsd / $0 }
            table.add(["writes/s, \(row.writers) writer\(row.writers == 1 ? "" : "s")", "\(Int(row.prefsd.rounded()))/s",
                       "dconf `Change`", row.dconf.map { "\(Int($0.rounded()))/s" } ?? "–",
                       ratio.map { "prefsd/dconf \(Format.ratio($0))" } ?? "–",
                       row.writers == 16 ? "≥ 5×" : "–", row.writers == 16 ? verdict(ratio.map { $0 >= 5 }) : "–"])
        }
        if let cached {
            table.add(["cached `string(forKey:)` hit", "\(Format.format1(cached.ours.median)) ns / \(Format.format1(cached.ours.p99)) ns",
                       "Foundation `UserDefaults.string(forKey:)`",
                       "\(Format.format1(cached.foundation.median)) ns / \(Format.format1(cached.foundation.p99)) ns",
                       "prefsd/UserDefaults \(Format.ratio(cached.ours.median / cached.foundation.median))",
                       "≤ 100 ns", verdict(cached.ours.median <= 100e0)])
        }
        if let propagation {
            let ratio = medianRatio(propagation.propagation.summary, propagation.ping.summary)
            table.add(["change propagation (durable `Write` → observer in another process)",
                       propagation.propagation.text + " (n=\(propagation.propagation.summary?.count ?? 0))",
                       "`Peer.Ping` to prefsd", propagation.ping.text, ratio.map { "\(Format.ratio($0)) Ping" } ?? "–",
                       "≤ 3× Ping", verdict(ratio.map { $0 <= 3 })])
        }
        if let coldStart {
            let rss = coldStart.peakRSS.map { Double($0) / 1_048_576 }
            table.add(["cold start, \(coldStart.filled) keys in 1,000 domains: launch → first `Read` answered",
                       Format.duration(coldStart.startup), "", "", "", "≤ 300 ms", verdict(coldStart.startup <= 0.3)])
            table.add(["cold start: prefsd peak RSS (VmHWM) after the first answer",
                       rss.map { "\(Format.format1($0)) MiB" } ?? "?", "", "", "", "≤ 64 MiB", verdict(rss.map { $0 <= 64 })])
        }
        if let rapidWrites { table.add(rapidWrites.row) }
        var text = "Machine: \(machine).  \nLoad: \(load).  \nRun: \(quick ? "`--quick`" : "full"); times are round trips through one private dbus-daemon, all clients but the GDBus reference using the project's DBus module.\n\n"
        text += table.render()
        var allNotes = notes
        if let reference { allNotes.append(reference.note) }
        allNotes.append("The `Read`/`Write` sweep keeps all its keys in ONE domain (`bench.big`), plus the 2 keys measured; dconf keeps them in one directory (`/bench/`).")
        allNotes.append("Writes/s run on nearly empty stores, each writer on its own connection waiting for each reply.")
        if let mainPeakRSS {
            allNotes.append("prefsd's peak RSS after the sweep (\(mainKeys) keys in one domain, every measurement above): \(Format.format1(Double(mainPeakRSS) / 1_048_576)) MiB.")
        }
        text += "\n" + allNotes.map { "- " + $0 }.joined(separator: "\n") + "\n"
        return text
    }
}

/// The ratio of two medians, when both were measured.
private func medianRatio(_ a: Summary?, _ b: Summary?) -> Double? {
    guard let a, let b else { return nil }
    return a.median / b.median
}
