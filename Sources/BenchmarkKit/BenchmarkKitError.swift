/// Errors of the benchmark's pure parts.
public enum BenchmarkKitError: Error, Equatable, CustomStringConvertible {
    /// A timing line of a measuring child process was not the numbers expected.
    case malformedSamples(expected: Int, line: String)

    /// A sentence saying what went wrong.
    public var description: String {
        switch self {
        case .malformedSamples(let expected, let line):
            let shown = line.count > 120 ? String(line.prefix(120)) + "…" : line
            return "expected \(expected) whole numbers of nanoseconds separated by spaces, got \"\(shown)\""
        }
    }
}
