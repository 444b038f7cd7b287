/// The timing lines of the GDBus reference client: one line per batch, the nanoseconds of
/// each call as whole numbers separated by single spaces, the calls of one round in order
/// (`read`: Ping, Read; `write`: Ping, Write, the disk's sync), round after round.
public enum SampleLine {
    /// Splits `line` into `lanes` lanes of `rounds` samples each, in seconds: lane `k` holds
    /// the `k`-th number of every round.
    /// - Throws: ``BenchmarkKitError/malformedSamples(expected:line:)`` unless the line holds
    ///   exactly `lanes × rounds` non-negative whole numbers.
    public static func lanes(_ line: String, lanes: Int, rounds: Int) throws(BenchmarkKitError) -> [[Double]] {
        let expected = lanes * rounds
        let words = line.split(separator: " ", omittingEmptySubsequences: false)
        let numbers = words.compactMap { UInt64($0) }
        guard lanes > 0, numbers.count == expected, words.count == expected else {
            throw .malformedSamples(expected: expected, line: line)
        }
        return (0..<lanes).map { lane in
            stride(from: lane, to: expected, by: lanes).map { Double(numbers[$0]) / 1e9 }
        }
    }
}
