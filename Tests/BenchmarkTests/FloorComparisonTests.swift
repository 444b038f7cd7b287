import BenchmarkKit
import Testing

@Suite("GDBus client sample lines")
struct SampleLineTests {
    @Test func roundsSplitIntoLanesInSeconds() throws {
        let lanes = try SampleLine.lanes("1000 2000 3000 4000 5000 6000", lanes: 3, rounds: 2)
        #expect(lanes == [[1e-6, 4e-6], [2e-6, 5e-6], [3e-6, 6e-6]])
        #expect(try SampleLine.lanes("7 8", lanes: 2, rounds: 1) == [[7e-9], [8e-9]])
    }

    @Test func anythingButTheExpectedNumbersIsRefused() {
        for line in ["1 2 3", "1 2 3 4 5", "1 x", "1  2", "1 -2", "1 2.5", "", "1 2 "] {
            #expect(throws: BenchmarkKitError.self, "\"\(line)\"") { try SampleLine.lanes(line, lanes: 2, rounds: line.hasPrefix("1 2 3") ? 2 : 1) }
        }
        #expect(throws: BenchmarkKitError.malformedSamples(expected: 4, line: "1 2 3")) { try SampleLine.lanes("1 2 3", lanes: 2, rounds: 2) }
    }

    @Test func theErrorSaysWhatWasExpected() {
        let error = BenchmarkKitError.malformedSamples(expected: 4, line: "Read: no such name")
        #expect(error.description == "expected 4 whole numbers of nanoseconds separated by spaces, got \"Read: no such name\"")
    }
}

@Suite("Floor rows")
struct FloorComparisonTests {
    /// One service's figures, each from a single sample (so the median is that sample), in µs.
    func times(readPing: Double, read: Double, writePing: Double, write: Double, sync: Double) -> ServiceTimes {
        ServiceTimes(
            readPing: Figure([readPing / 1e6]), read: Figure([read / 1e6]), writePing: Figure([writePing / 1e6]),
            write: Figure([write / 1e6]), sync: Figure([sync / 1e6]))
    }

    func comparison(prefsdRead: Double = 120, prefsdWrite: Double = 500) -> FloorComparison {
        FloorComparison(
            prefsd: times(readPing: 100, read: prefsdRead, writePing: 100, write: prefsdWrite, sync: 150),
            floor: times(readPing: 100, read: 110, writePing: 100, write: 300, sync: 150),
            storeFloor: ServiceTimes(
                readPing: .missing("not read"), read: .missing("not read"), writePing: Figure([110e-6]), write: Figure([400e-6]),
                sync: Figure([160e-6])),
            readBatch: 100, writeBatch: 20)
    }

    @Test func ratiosAndDifferences() throws {
        let prefsd = comparison().prefsd
        #expect(abs(try #require(prefsd.readOverPing) - 1.2) < 1e-9)
        #expect(abs(try #require(prefsd.readMinusPing) - 20e-6) < 1e-12)
        #expect(abs(try #require(prefsd.writeFloor) - 250e-6) < 1e-12)
        #expect(abs(try #require(prefsd.writeOverFloor) - 2.0) < 1e-9)
        #expect(abs(try #require(prefsd.writeMinusFloor) - 250e-6) < 1e-12)
    }

    /// prefsd's rows keep the targets; the floor's rows have none and show prefsd's
    /// figure beside the floor's.
    @Test func readRows() {
        let rows = comparison().readRows
        #expect(rows.count == 2)
        #expect(rows[0][0] == "`Read` through GDBus (C, gio-2.0), prefsd")
        #expect(rows[0][4] == "Read/Ping 1.20×")
        #expect(rows[0][5] == "≤ 1.0×")
        #expect(rows[0][6] == "**missed**")
        #expect(comparison(prefsdRead: 100).readRows[0][6] == "met")
        #expect(rows[1][4] == "Read/Ping 1.10× (prefsd 1.20×); Read − Ping +10.0 µs (prefsd +20.0 µs)")
        #expect(rows[1][5] == "– (context)")
        #expect(rows[1][6] == "–")
        #expect(rows[1][1] == "110 µs / 110 µs (n=1)")
        #expect(comparison(prefsdRead: 90).readRows[1][4].hasSuffix("(prefsd −10.0 µs)"))
    }

    @Test func writeRows() {
        let rows = comparison().writeRows
        #expect(rows.count == 3)
        #expect(rows[0][3] == "100 µs + 150 µs = 250 µs")
        #expect(rows[0][4] == "Write/floor 2.00×")
        #expect(rows[0][5] == "≤ 1.3×")
        #expect(rows[0][6] == "**missed**")
        #expect(comparison(prefsdWrite: 320).writeRows[0][6] == "met")
        #expect(rows[1][4] == "Write/floor 1.20× (prefsd 2.00×); Write − floor +50.0 µs (prefsd +250 µs)")
        #expect(rows[1][5] == "– (context)")
    }

    /// The store floor's row: its own Write − (Ping + fdatasync), and what prefsd's passes it
    /// by, held to the 60 µs.
    @Test func storeFloorRow() throws {
        let comparison = comparison()
        let row = comparison.writeRows[2]
        #expect(row[0].hasSuffix("the store floor"))
        #expect(row[1] == "400 µs / 400 µs (n=1)")
        #expect(row[3] == "110 µs + 160 µs = 270 µs")
        // prefsd: 500 − 250 = +250 µs; the store floor: 400 − 270 = +130 µs; prefsd passes it by 120 µs.
        #expect(abs(try #require(comparison.writeOverStoreFloor) - 120e-6) < 1e-12)
        #expect(row[4] == "Write/floor 1.48× (prefsd 2.00×); Write − floor +130 µs (prefsd +250 µs); prefsd's over this one's +120 µs")
        #expect(row[5] == "prefsd ≤ this + 60.0 µs")
        #expect(row[6] == "**missed**")
        // Within 60 µs is met (prefsd's Write 439 µs: +189 against the store floor's +130).
        #expect(self.comparison(prefsdWrite: 439).writeRows[2][6] == "met")
        #expect(self.comparison(prefsdWrite: 441).writeRows[2][6] == "**missed**")
    }

    @Test func missingFiguresSayWhyAndMeetNothing() {
        let missing = FloorComparison.missing("not measured: cc failed")
        for row in missing.readRows + missing.writeRows {
            #expect(row.count == 7)
            #expect(row[1] == "not measured: cc failed")
            #expect(row[4] == "–")
            #expect(row[6] == "–")
        }
    }

    @Test func theNoteNamesTheBatchesAndTheService() {
        let note = comparison().note
        #expect(note.contains("batches of 100 Ping+Read rounds and 20 Ping+Write+fdatasync rounds"))
        #expect(note.contains(FloorService.busName))
        #expect(note.contains(StoreFloorService.busName))
    }
}
