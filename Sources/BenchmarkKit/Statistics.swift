/// Order statistics of a sample of measurements (nearest-rank percentiles).
public struct Summary: Sendable, Equatable {
    /// How many samples there were.
    public let count: Int
    /// The median (p50).
    public let median: Double
    /// The 99th percentile.
    public let p99: Double
    /// The smallest sample.
    public let minimum: Double

    /// Summarises `samples`; nil when there are none.
    public init?(_ samples: [Double]) {
        guard !samples.isEmpty else { return nil }
        let sorted = samples.sorted()
        count = sorted.count
        median = Self.percentile(50, ofSorted: sorted)
        p99 = Self.percentile(99, ofSorted: sorted)
        minimum = sorted[0]
    }

    /// The nearest-rank percentile `p` (0…100] of an ascending, non-empty array: the smallest
    /// sample with at least p % of the samples at or below it. The median of an even count is
    /// the mean of the two middle samples.
    public static func percentile(_ p: Double, ofSorted sorted: [Double]) -> Double {
        precondition(!sorted.isEmpty, "percentile of no samples")
        if p == 50 {
            let middle = sorted.count / 2
            return sorted.count % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2
        }
        let rank = Int((p / 100 * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
