/// A measured figure: its summary, or the reason there is none.
public enum Figure: Sendable, Equatable {
    /// Measured: the samples' order statistics.
    case measured(Summary)
    /// Not measured, for this reason (empty: nothing to say).
    case missing(String)

    /// The summary, when measured.
    public var summary: Summary? {
        if case .measured(let summary) = self { return summary }
        return nil
    }

    /// The summary of `samples` (seconds), or missing when there are none.
    public init(_ samples: [Double]) {
        self = Summary(samples).map { .measured($0) } ?? .missing("no samples")
    }

    /// "p50 / p99" as durations, or the reason it is missing.
    public var text: String {
        switch self {
        case .measured(let s): return "\(Format.duration(s.median)) / \(Format.duration(s.p99))"
        case .missing(let reason): return reason
        }
    }

    /// ``text`` and the sample count: "p50 / p99 (n=…)".
    public var countedText: String {
        guard let summary else { return text }
        return text + " (n=\(summary.count))"
    }
}
