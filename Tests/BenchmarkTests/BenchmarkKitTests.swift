import BenchmarkKit
import Testing

@Suite("Benchmark statistics")
struct StatisticsTests {
    @Test func medianOfOddAndEvenCounts() {
        #expect(Summary([5, 1, 3])?.median == 3)
        #expect(Summary([4, 1, 3, 2])?.median == 2.5)
        #expect(Summary([]) == nil)
    }

    @Test func nearestRankP99() {
        // 1…100: the 99th percentile is the 99th value; 1…1000: the 990th.
        #expect(Summary((1...100).map(Double.init))?.p99 == 99)
        #expect(Summary((1...1000).map(Double.init).reversed())?.p99 == 990)
        // Fewer than 100 samples: p99 is the largest.
        #expect(Summary([1, 2, 3, 50])?.p99 == 50)
        #expect(Summary([7])?.p99 == 7)
        #expect(Summary([7, 2])?.minimum == 2)
    }
}

@Suite("Benchmark table")
struct TableTests {
    @Test func columnsLineUp() {
        var table = MarkdownTable(header: ["a", "bbb"])
        table.add(["xxxx", "y"])
        #expect(table.render() == "| a    | bbb |\n| ---- | --- |\n| xxxx | y   |\n")
    }

    @Test func durations() {
        #expect(Format.duration(43.2e-9) == "43.2 ns")
        #expect(Format.duration(216e-6) == "216 µs")
        #expect(Format.duration(3.509e-3) == "3.51 ms")
        #expect(Format.duration(0.337) == "337 ms")
        #expect(Format.duration(-71.4e-6) == "−71.4 µs")
        #expect(Format.ratio(1.2549) == "1.25×")
    }
}

@Suite("History cost rows")
struct HistoryCostTests {
    func cost(with: Double, without: Double, entries: Int = 10, bytes: Int = 100, newestRead: Double = 0.02) -> HistoryCost {
        HistoryCost(
            withJournal: with, withoutJournal: without, oneFrameSync: 200e-6, twoFrameSync: 230e-6,
            changes: 1_000_000, entries: entries, bytes: bytes,
            entryBound: 100_000, byteBound: 32 << 20, fileBytes: 4096, newestRead: newestRead, wholeRead: 1.1, readFloor: 0.01)
    }

    @Test func writeRatioAgainstThreePercent() {
        #expect(cost(with: 1.03e-3, without: 1e-3).writeMet)
        #expect(!cost(with: 1.04e-3, without: 1e-3).writeMet)
        #expect(cost(with: 0.9e-3, without: 1e-3).writeMet)
        #expect(!cost(with: 1e-3, without: 0).writeMet, "no figure without the journal is no pass")
        #expect(cost(with: 1.06e-3, without: 1e-3).rows[0].last == "**missed**")
        #expect(cost(with: 1.06e-3, without: 1e-3).rows[0][2] == "≤ 1.03×")
        #expect(cost(with: 1.06e-3, without: 1e-3).rows[0][1].hasSuffix("1.06×"))
    }

    @Test func floorAddsOneWALPage() {
        // 1 ms without the journal, and a second frame costs 30 µs more to sync: 1.03×.
        let floor = cost(with: 1.1e-3, without: 1e-3)
        #expect(abs(floor.floorRatio - 1.03) < 1e-9)
        #expect(floor.rows[1][1] == "\(Format.duration(230e-6)) − \(Format.duration(200e-6)): 1.03×")
        #expect(cost(with: 1, without: 0).floorRatio == .infinity)
    }

    @Test func boundOnEntriesAndBytes() {
        #expect(cost(with: 1, without: 1, entries: 100_000, bytes: 32 << 20).boundMet)
        #expect(!cost(with: 1, without: 1, entries: 100_001).boundMet)
        #expect(!cost(with: 1, without: 1, bytes: (32 << 20) + 1).boundMet)
        #expect(cost(with: 1, without: 1).rows[2][0] == "journal after 1000000 changes of one key")
    }

    @Test func newestReadAgainstFiftyMilliseconds() {
        #expect(cost(with: 1, without: 1, newestRead: 0.050).rows[3].last == "met")
        #expect(cost(with: 1, without: 1, newestRead: 0.051).rows[3].last == "**missed**")
        #expect(cost(with: 1, without: 1, newestRead: 0.020).rows[3][1] == "\(Format.duration(0.020)); \(Format.duration(1.1)); \(Format.duration(0.01))")
    }
}
