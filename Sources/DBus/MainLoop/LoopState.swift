import Dispatch

/// A libdbus watch as the event thread polls it.
struct WatchEntry: Sendable {
    /// Distinguishes this entry from an earlier watch at the same address.
    let id: Int
    /// The libdbus watch.
    let watch: UnsafeHandle
    /// Our own `dup()` of the watch's descriptor: libdbus closing its descriptor can never
    /// leave the event thread polling a number reused by something else. Closed by the event
    /// thread once the watch is gone (see ``LoopState/retired``).
    let descriptor: Int32
    /// The directions libdbus wants watched (`DBUS_WATCH_READABLE`, `DBUS_WATCH_WRITABLE`).
    let flags: UInt32
    /// Whether libdbus has the watch enabled; a disabled watch is not polled.
    var enabled: Bool
}

/// A libdbus timeout and the timer that serves it while enabled.
///
/// `@unchecked Sendable` only because the Dispatch overlay does not mark its source
/// existentials Sendable: libdispatch objects are thread-safe, and this value is only read and
/// changed under the core's `loop` mutex.
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
    /// Descriptors of watches that are gone, for the event thread to close once it no longer
    /// polls them.
    var retired: [Int32] = []
    /// Live timeouts.
    var timeouts: [UInt: TimeoutEntry] = [:]
    /// The next entry id.
    var nextID = 0
    /// The connection is closed: the event thread closes what it holds and ends.
    var stopped = false
}

/// The dictionary key of a libdbus object.
func key(of pointer: OpaquePointer) -> UInt {
    UInt(bitPattern: Int(bitPattern: UnsafeRawPointer(pointer)))
}
