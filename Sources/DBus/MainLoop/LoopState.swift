import Dispatch

/// One DispatchSource driving one direction of a libdbus watch.
///
/// `@unchecked Sendable` only because the Dispatch overlay does not mark its source
/// existentials Sendable: libdispatch objects are thread-safe, and this value is only read and
/// changed under the core's `loop` mutex.
struct WatchSource: @unchecked Sendable {
    /// The read or write source.
    let source: any DispatchSourceProtocol
    /// Whether we suspended it because libdbus disabled the watch.
    var suspended: Bool
}

/// A libdbus watch and the sources that serve it.
struct WatchEntry: Sendable {
    /// Distinguishes this entry from an earlier watch at the same address.
    let id: Int
    /// The libdbus watch.
    let watch: UnsafeHandle
    /// One source per direction.
    var sources: [WatchSource]
}

/// A libdbus timeout and the timer that serves it while enabled.
///
/// `@unchecked Sendable` for the same reason as ``WatchSource``.
struct TimeoutEntry: @unchecked Sendable {
    /// Distinguishes this entry from an earlier timeout at the same address.
    let id: Int
    /// The libdbus timeout.
    let timeout: UnsafeHandle
    /// The timer while the timeout is enabled.
    var timer: (any DispatchSourceTimer)?
}

/// The main loop's bookkeeping, keyed by libdbus object address.
struct LoopState: Sendable {
    /// Live watches.
    var watches: [UInt: WatchEntry] = [:]
    /// Live timeouts.
    var timeouts: [UInt: TimeoutEntry] = [:]
    /// The next entry id.
    var nextID = 0
}

/// The dictionary key of a libdbus object.
func key(of pointer: OpaquePointer) -> UInt {
    UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer)))
}
