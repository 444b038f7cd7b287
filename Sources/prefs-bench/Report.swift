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
    var propagation: (propagation: Figure, afterReply: Figure, ping: Figure)?
    var coldStart: (startup: Double, peakRSS: Int?, filled: Int)?
    var rapidWrites: RapidWrites?
    var reference: ReferenceReads?
    /// prefsd beside the floor service, through the GDBus reference client.
    var floor: FloorComparison?
    var mainPeakRSS: Int?
    /// prefsd's peak RSS once it answered its first call on an empty store.
    var emptyPeakRSS: Int?
    var mainKeys = 0

    private func verdict(_ met: Bool?) -> String {
        met.map { $0 ? "met" : "**missed**" } ?? "–"
    }

    private static func anchorText(_ figure: Figure) -> String {
        switch figure {
        case .missing(let reason): return reason.isEmpty ? "–" : reason
        case .measured(let summary): return figure.text + " (n=\(summary.count))"
        }
    }

    // Swift 6.3.1's CopyPropagation pass crashes on this function in release builds
    // ("Found ownership error"); it runs once, so it is simply left unoptimised.
    @_optimize(none)
    func render() -> String {
        var table = MarkdownTable(header: ["figure", "prefsd p50 / p99", "anchor", "anchor p50 / p99", "ratio (p50)", "target", "result"])
        for row in sizes {
            let ratio = medianRatio(row.read.summary, row.ping.summary)
            table.add([
                "`Read`, \(row.keys) keys", row.read.text + " (n=\(row.read.summary?.count ?? 0))",
                "`Peer.Ping` to prefsd", row.ping.text,
                ratio.map { "Read/Ping \(Format.ratio($0))" } ?? "–", "–", "–",
            ])
        }
        if let reference { table.add(reference.row) }
        for row in floor?.readRows ?? [] { table.add(row) }
        for row in sizes {
            let write = row.write
            table.add([
                "durable `Write`, \(row.keys) keys", write.write.text + " (n=\(write.write.summary?.count ?? 0))",
                "`Peer.Ping` + `fdatasync` of 4 KiB in the store's directory (p50s)",
                Self.floorText(write.ping, write.sync, write.floor),
                write.ratio.map { "Write/floor \(Format.ratio($0))" } ?? "–", "≤ 1.3×", verdict(write.ratio.map { $0 <= 1.3 }),
            ])
        }
        for row in sizes {
            let write = row.write
            table.add([
                "durable `Write`, \(row.keys) keys, against a WAL frame's sync", write.write.text,
                "`Peer.Ping` + `fdatasync` of a 24 B + 4 KiB frame at a new offset, as SQLite's WAL writes one (p50s)",
                Self.floorText(write.ping, write.frameSync, write.frameFloor),
                write.frameRatio.map { "Write/floor \(Format.ratio($0))" } ?? "–", "–", "–",
            ])
        }
        for row in floor?.writeRows ?? [] { table.add(row) }
        if let empty = sizes.first(where: { $0.keys == 0 })?.write.write.summary?.median,
            let largest = sizes.last, largest.keys > 0, let here = largest.write.write.summary?.median
        {
            table.add([
                "durable `Write` growth, 0 → \(largest.keys) keys", Format.duration(here), "durable `Write`, 0 keys",
                Format.duration(empty), "\(Format.ratio(here / empty))", "≤ 1.5×", verdict(here / empty <= 1.5),
            ])
        }
        for row in sizes where row.dconfWrite.summary != nil || row.keys == 0 {
            let speedup = medianRatio(row.dconfWrite.summary, row.write.write.summary)
            let target = row.keys == 10_000 ? "dconf/prefsd ≥ 100×" : "–"
            let met = row.keys == 10_000 ? speedup.map { $0 >= 100 } : nil
            table.add([
                "dconf `Change`, \(row.keys) keys", Self.anchorText(row.dconfWrite),
                "durable `Write`, \(row.keys) keys", row.write.write.text,
                speedup.map { "dconf/prefsd \(Format.ratio($0))" } ?? "–", target, verdict(met),
            ])
        }
        for row in concurrency {
            let ratio = row.dconf.map { row.prefsd / $0 }
            table.add([
                "writes/s, \(row.writers) writer\(row.writers == 1 ? "" : "s")", "\(Int(row.prefsd.rounded()))/s",
                "dconf `Change`", row.dconf.map { "\(Int($0.rounded()))/s" } ?? "–",
                ratio.map { "prefsd/dconf \(Format.ratio($0))" } ?? "–",
                row.writers == 16 ? "≥ 5×" : "–", row.writers == 16 ? verdict(ratio.map { $0 >= 5 }) : "–",
            ])
        }
        if let cached {
            table.add([
                "cached `string(forKey:)` hit", "\(Format.format1(cached.ours.median)) ns / \(Format.format1(cached.ours.p99)) ns",
                "Foundation `UserDefaults.string(forKey:)`",
                "\(Format.format1(cached.foundation.median)) ns / \(Format.format1(cached.foundation.p99)) ns",
                "prefsd/UserDefaults \(Format.ratio(cached.ours.median / cached.foundation.median))",
                "≤ 50 ns", verdict(cached.ours.median <= 50e0),
            ])
        }
        if let propagation {
            let rows = [
                ("change propagation (durable `Write` → observer in another process)", propagation.propagation, 3.0, "≤ 3× Ping"),
                ("change propagation: the writer's reply → the observer's handler in another process", propagation.afterReply, 1.0, "≤ 1 Ping"),
            ]
            for (title, figure, limit, target) in rows {
                let ratio = medianRatio(figure.summary, propagation.ping.summary)
                table.add([
                    title, figure.text + " (n=\(figure.summary?.count ?? 0))", "`Peer.Ping` to prefsd", propagation.ping.text,
                    ratio.map { "\(Format.ratio($0)) Ping" } ?? "–", target, verdict(ratio.map { $0 <= limit }),
                ])
            }
        }
        if let coldStart {
            let rss = coldStart.peakRSS.map { Double($0) / 1_048_576 }
            table.add([
                "cold start, \(coldStart.filled) keys in 1,000 domains: launch → first `Read` of a stored key answered",
                Format.duration(coldStart.startup), "", "", "", "≤ 60 ms", verdict(coldStart.startup <= 0.060),
            ])
            table.add([
                "cold start: prefsd peak RSS (VmHWM) once every domain is loaded (`Domains` answered)",
                rss.map { "\(Format.format1($0)) MiB" } ?? "?", "", "", "", "≤ 37 MiB", verdict(rss.map { $0 <= 37 }),
            ])
            if let rss, let empty = emptyPeakRSS.map({ Double($0) / 1_048_576 }), coldStart.filled > 0 {
                let perThousand = (rss - empty) / (Double(coldStart.filled) / 1000)
                table.add([
                    "cold start: peak RSS per 1,000 keys stored (above an empty store's \(Format.format1(empty)) MiB)",
                    "\(Format.format1(perThousand * 1024)) KiB", "", "", "", "–", "–",
                ])
            }
        }
        if let main = mainPeakRSS.map({ Double($0) / 1_048_576 }), let empty = emptyPeakRSS.map({ Double($0) / 1_048_576 }), mainKeys > 0 {
            let perThousand = (main - empty) / (Double(mainKeys) / 1000)
            table.add([
                "after the sweep: peak RSS per 1,000 keys stored (\(mainKeys) keys in one domain, every measurement above)",
                "\(Format.format1(perThousand * 1024)) KiB", "", "", "", "–", "–",
            ])
        }
        if let rapidWrites { table.add(rapidWrites.row) }
        var text =
            "Machine: \(machine).  \nLoad: \(load).  \nRun: \(quick ? "`--quick`" : "full"); times are round trips through one private dbus-daemon, all clients but the GDBus reference using the project's DBus module.\n\n"
        text += table.render()
        var allNotes = notes
        if let reference { allNotes.append(reference.note) }
        if let floor { allNotes.append(floor.note) }
        allNotes.append(
            "The `Read`/`Write` sweep keeps all its keys in ONE domain (`bench.big`), plus the 2 keys measured; dconf keeps them in one directory (`/bench/`).")
        allNotes.append("Writes/s run on nearly empty stores, each writer on its own connection waiting for each reply.")
        if let mainPeakRSS {
            allNotes.append(
                "prefsd's peak RSS after the sweep (\(mainKeys) keys in one domain, every measurement above): \(Format.format1(Double(mainPeakRSS) / 1_048_576)) MiB."
            )
        }
        text += "\n" + allNotes.map { "- " + $0 }.joined(separator: "\n") + "\n"
        return text
    }
}

extension Report {
    /// "Ping p50 + sync p50 = floor", or "–" when one is missing.
    static func floorText(_ ping: Figure, _ sync: Figure, _ floor: Double?) -> String {
        guard let ping = ping.summary, let sync = sync.summary, let floor else { return "–" }
        return "\(Format.duration(ping.median)) + \(Format.duration(sync.median)) = \(Format.duration(floor))"
    }
}

/// The ratio of two medians, when both were measured.
private func medianRatio(_ a: Summary?, _ b: Summary?) -> Double? {
    guard let a, let b else { return nil }
    return a.median / b.median
}
