import Dispatch

extension Duration {
    /// The duration in whole nanoseconds (what is below a nanosecond dropped), clamped to
    /// `Int`.
    public var wholeNanoseconds: Int {
        let (seconds, attoseconds) = components
        return Int(clamping: Int128(seconds) * 1_000_000_000 + Int128(attoseconds / 1_000_000_000))
    }

    /// The duration as Dispatch's interval, to add to a `DispatchTime`.
    public var dispatchInterval: DispatchTimeInterval { .nanoseconds(wholeNanoseconds) }
}
