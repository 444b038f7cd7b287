/// A hybrid logical clock time: wall-clock milliseconds, then a counter that orders
/// changes made within one millisecond, or while the wall clock lags a time already seen.
///
/// Times compare by wall time, then counter. A machine's clock only moves forward, and it
/// moves past every time it has seen in another machine's file, so a change made after
/// seeing another is always later than it, whatever the machines' wall clocks say.
public struct HybridTime: Sendable, Hashable, Comparable, CustomStringConvertible {
    /// Milliseconds since 1970-01-01T00:00:00Z, as the clock knew it.
    public var wall: UInt64
    /// Orders times of one wall millisecond.
    public var counter: UInt32

    /// Makes a time.
    public init(wall: UInt64, counter: UInt32 = 0) {
        self.wall = wall
        self.counter = counter
    }

    /// The earliest time.
    public static let zero = HybridTime(wall: 0)

    public static func < (lhs: HybridTime, rhs: HybridTime) -> Bool {
        (lhs.wall, lhs.counter) < (rhs.wall, rhs.counter)
    }

    /// `wall.counter`, e.g. `1764100000123.0`.
    public var description: String { "\(wall).\(counter)" }
}

/// A hybrid logical clock (Kulkarni et al., 2014): each `tick` is later than every time
/// it returned or observed before, and as close to the physical clock as that allows.
public struct HybridClock: Sendable, Equatable {
    /// The latest time handed out or observed.
    public private(set) var latest: HybridTime

    /// Starts a clock that has seen nothing later than `latest`.
    public init(latest: HybridTime = .zero) {
        self.latest = latest
    }

    /// The time of a new local change, given the physical clock in milliseconds.
    public mutating func tick(physical: UInt64) -> HybridTime {
        if physical > latest.wall {
            latest = HybridTime(wall: physical)
        } else if latest.counter == .max {
            latest = HybridTime(wall: latest.wall + 1)
        } else {
            latest.counter += 1
        }
        return latest
    }

    /// Notes a time seen in another machine's change: later ticks are later than it.
    public mutating func observe(_ time: HybridTime) {
        if time > latest { latest = time }
    }
}
