import BenchmarkKit

/// Bounds of one measurement loop: at most `count` samples, stopping early after `seconds`
/// (at least `minimum` samples are still taken unless a sample fails).
struct Budget {
    var count: Int
    var seconds: Double
    var minimum: Int = 3
}

/// Runs `body` until the budget is spent; each call returns one or more samples in seconds
/// (so interleaved measurements stay paired).
func sample(_ budget: Budget, _ lanes: Int = 1, _ body: (Int) throws -> [Double]) rethrows -> [[Double]] {
    var samples = Array(repeating: [Double](), count: lanes)
    let start = now()
    var i = 0
    while i < budget.count && (i < budget.minimum || now() - start < budget.seconds) {
        let taken = try body(i)
        for lane in 0..<lanes { samples[lane].append(taken[lane]) }
        i += 1
    }
    return samples
}
