/// A Markdown table: a header row and rows of cells, columns padded to line up.
public struct MarkdownTable: Sendable {
    /// The column titles.
    public var header: [String]
    /// The rows, each a list of cells in column order.
    public var rows: [[String]] = []

    /// An empty table with these column titles.
    public init(header: [String]) {
        self.header = header
    }

    /// Appends a row.
    public mutating func add(_ row: [String]) {
        rows.append(row)
    }

    /// The table as Markdown text, one line per row, ending in a newline.
    public func render() -> String {
        let all = [header] + rows
        let widths = header.indices.map { column in
            all.map { $0.indices.contains(column) ? $0[column].count : 0 }.max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            let padded = widths.indices.map { column -> String in
                let cell = cells.indices.contains(column) ? cells[column] : ""
                return cell + String(repeating: " ", count: widths[column] - cell.count)
            }
            return "| " + padded.joined(separator: " | ") + " |"
        }
        let rule = "| " + widths.map { String(repeating: "-", count: max($0, 3)) }.joined(separator: " | ") + " |"
        return ([line(header), rule] + rows.map(line)).joined(separator: "\n") + "\n"
    }
}

/// Formats durations and rates for the table.
public enum Format {
    /// Seconds as ns, µs (below 1 ms), ms or s, with three significant figures.
    public static func duration(_ seconds: Double) -> String {
        // A difference of two clocks can be below zero (an event before the one it is timed from).
        if seconds < 0 { return "−" + duration(-seconds) }
        if seconds < 1e-6 { return String(format1(seconds * 1e9)) + " ns" }
        if seconds < 1e-3 { return String(format1(seconds * 1e6)) + " µs" }
        if seconds < 10 { return String(format1(seconds * 1e3)) + " ms" }
        return format1(seconds) + " s"
    }

    /// A ratio like `1.07×`.
    public static func ratio(_ value: Double) -> String {
        format1(value) + "×"
    }

    /// Three significant figures at most, no exponent.
    public static func format1(_ value: Double) -> String {
        guard value.isFinite else { return "–" }
        let magnitude = abs(value)
        let decimals = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : 2
        var scaled = (value * pow10(decimals)).rounded() / pow10(decimals)
        if scaled == -0.0 { scaled = 0 }
        var text = "\(scaled)"
        if decimals == 0, text.hasSuffix(".0") { text.removeLast(2) }
        if let dot = text.firstIndex(of: ".") {
            let fraction = text.distance(from: dot, to: text.endIndex) - 1
            if fraction < decimals { text += String(repeating: "0", count: decimals - fraction) }
        }
        return text
    }

    private static func pow10(_ n: Int) -> Double {
        var value = 1.0
        for _ in 0..<n { value *= 10 }
        return value
    }
}
