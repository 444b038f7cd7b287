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

@Suite("GVariant a{smv} changeset encoder")
struct GVariantTests {
    /// `{'/a': <int32 1>}` as `a{smv}`, derived by hand from the GVariant serialisation spec:
    /// the entry is "/a" NUL (3 bytes), padding to 8 (5 bytes), the variant — int32 1 little-endian,
    /// NUL, "i" (6 bytes) — the Just marker 0 (1 byte), then the key's end offset 3 in one byte:
    /// 16 bytes. The array appends the entry's end offset 16 (0x10) in one byte: 17 bytes.
    @Test func oneInt32Entry() {
        let bytes = GVariantChangeset.serialize([("/a", .int32(1))])
        #expect(
            bytes == [
                0x2f, 0x61, 0x00, 0, 0, 0, 0, 0,
                0x01, 0x00, 0x00, 0x00, 0x00, 0x69, 0x00, 0x03,
                0x10,
            ])
    }

    /// A reset (`Nothing`) is the key and its offset only; a second entry starts 8-aligned.
    /// "/a" NUL + offset 3 = 4 bytes, padding to 8, then "/b" NUL 's' NUL NUL "s" … as below.
    @Test func resetAndStringEntries() {
        let bytes = GVariantChangeset.serialize([("/a", nil), ("/b", .string("x"))])
        let first: [UInt8] = [0x2f, 0x61, 0x00, 0x03]
        // "/b" NUL, pad to 8, "x" NUL NUL "s" (variant of a string), Just 0, key offset 3.
        let second: [UInt8] = [0x2f, 0x62, 0x00, 0, 0, 0, 0, 0, 0x78, 0x00, 0x00, 0x73, 0x00, 0x03]
        let ends: [UInt8] = [4, 8 + UInt8(second.count)]
        #expect(bytes == first + [0, 0, 0, 0] + second + ends)
    }

    @Test func emptyChangesetIsEmpty() {
        #expect(GVariantChangeset.serialize([]).isEmpty)
    }

    @Test func offsetWidthGrowsWithTheContainer() {
        #expect(GVariantChangeset.offsetWidth(contentSize: 0, offsets: 1) == 1)
        #expect(GVariantChangeset.offsetWidth(contentSize: 254, offsets: 1) == 1)
        #expect(GVariantChangeset.offsetWidth(contentSize: 255, offsets: 1) == 2)
        #expect(GVariantChangeset.offsetWidth(contentSize: 65_000, offsets: 300) == 4)
        #expect(GVariantChangeset.offsetWidth(contentSize: 1 << 32, offsets: 1) == 8)
        // 1,000 entries (~25 KB): 2-byte offsets; the last one is where the offset table starts.
        let big = GVariantChangeset.serialize((0..<1000).map { ("/bench/k\($0)", .int32(Int32($0))) })
        let tableStart = big.count - 2 * 1000
        #expect(big.count > 255 && big.count < 65_536)
        #expect(Int(big[big.count - 2]) | Int(big[big.count - 1]) << 8 == tableStart)
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
        #expect(Format.ratio(1.2549) == "1.25×")
    }
}

@Suite("History cost rows")
struct HistoryCostTests {
    func cost(with: Double, without: Double, entries: Int = 10, bytes: Int = 100) -> HistoryCost {
        HistoryCost(
            withJournal: with, withoutJournal: without, changes: 1_000_000, entries: entries, bytes: bytes,
            entryBound: 100_000, byteBound: 32 << 20, fileBytes: 4096)
    }

    @Test func writeRatioAgainstFivePercent() {
        #expect(cost(with: 1.05e-3, without: 1e-3).writeMet)
        #expect(!cost(with: 1.06e-3, without: 1e-3).writeMet)
        #expect(cost(with: 0.9e-3, without: 1e-3).writeMet)
        #expect(!cost(with: 1e-3, without: 0).writeMet, "no figure without the journal is no pass")
        #expect(cost(with: 1.06e-3, without: 1e-3).rows[0].last == "**missed**")
        #expect(cost(with: 1.06e-3, without: 1e-3).rows[0][1].hasSuffix("1.06×"))
    }

    @Test func boundOnEntriesAndBytes() {
        #expect(cost(with: 1, without: 1, entries: 100_000, bytes: 32 << 20).boundMet)
        #expect(!cost(with: 1, without: 1, entries: 100_001).boundMet)
        #expect(!cost(with: 1, without: 1, bytes: (32 << 20) + 1).boundMet)
        #expect(cost(with: 1, without: 1).rows[1][0] == "journal after 1000000 changes of one key")
    }
}
