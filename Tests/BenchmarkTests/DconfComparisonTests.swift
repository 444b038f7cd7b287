import BenchmarkKit
import Testing

@Suite("dconf rows")
struct DconfComparisonTests {
    /// A figure from one sample in milliseconds (so its median is that sample).
    func ms(_ value: Double) -> Figure { Figure([value / 1e3]) }

    @Test func eachRowPrintsBothSidesTheirRatioAndTheTarget() {
        let rows = DconfComparison(
            dconfWrite: (ms(4), ms(4.4)), change: (ms(20), ms(1)), gsettingsGet: (ms(3), ms(3)), nativeWrite: (ms(1), ms(1.05)),
            keys: 10_000)
        let lines = rows.render().split(separator: "\n").map(String.init)
        #expect(lines.count == 6)
        #expect(lines[0].hasPrefix("| figure "))
        let cells = lines.dropFirst(2).map { $0.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) } }
        #expect(cells[0][1] == "dconf-service" && cells[0][2] == "4.00 ms / 4.00 ms (n=1)" && cells[0][3] == "prefsd --dconf")
        #expect(cells[0][4] == "4.40 ms / 4.40 ms (n=1)" && cells[0][5] == "prefsd/dconf 1.10×" && cells[0][6] == "≤ 1.1×")
        #expect(cells[1][0] == "`Change` of one key (bus round trip), 10,000 keys")
        #expect(cells[1][5] == "dconf/prefsd 20.0×" && cells[1][6] == "≥ 10×")
        #expect(cells[2][5] == "prefsd/dconf 1.00×")
        #expect(cells[3][0] == "prefsd durable `Write`, 10,000 keys" && cells[3][5] == "with/without 1.05×" && cells[3][6] == "≤ 1.10×")
    }

    @Test func aMissingSideLeavesTheRatioOpen() {
        let rows = DconfComparison(
            dconfWrite: (.missing("not run"), ms(4)), change: (ms(20), ms(1)), gsettingsGet: (ms(3), ms(3)), nativeWrite: (ms(1), ms(1)),
            keys: 1_234_567)
        let lines = rows.render().split(separator: "\n").map(String.init)
        let first = lines[2].split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
        #expect(first[2] == "not run" && first[5] == "–")
        #expect(lines[3].contains("1,234,567 keys"))
    }
}
