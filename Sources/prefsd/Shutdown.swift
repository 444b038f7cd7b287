import Dispatch
import Foundation
import Synchronization

/// Why a running prefsd stops.
enum ShutdownReason: Sendable, CustomStringConvertible {
    case signal(Int32)
    case busGone
    case replaced

    var description: String {
        switch self {
        case .signal(let number): number == SIGTERM ? "SIGTERM" : number == SIGINT ? "SIGINT" : "signal \(number)"
        case .busGone: "the bus connection was lost"
        case .replaced: "another prefsd took over the bus name (--replace)"
        }
    }
}

/// What ends prefsd: SIGTERM or SIGINT from the moment it is made, then the bus or a
/// replacement. A reason that comes while prefsd is still starting is kept, and ends it as
/// soon as it has started, so a signal is never lost in a start-up window.
final class Shutdown: Sendable {
    private let state = Mutex<(reason: ShutdownReason?, waiter: CheckedContinuation<ShutdownReason, Never>?)>((nil, nil))
    // DispatchSources are safe to use from any thread; Dispatch does not mark them Sendable.
    nonisolated(unsafe) private let signalSources: [any DispatchSourceSignal]

    /// Starts listening for SIGTERM and SIGINT.
    init() {
        signalSources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            return DispatchSource.makeSignalSource(signal: number, queue: .global())
        }
        for source in signalSources {
            let number = Int32(source.handle)
            source.setEventHandler { [self] in end(.signal(number)) }
            source.resume()
        }
    }

    /// Records why prefsd stops; the first reason wins.
    func end(_ reason: ShutdownReason) {
        let waiter = state.withLock { state -> CheckedContinuation<ShutdownReason, Never>? in
            guard state.reason == nil else { return nil }
            state.reason = reason
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: reason)
    }

    /// Waits for a reason to stop (at once if one came already).
    func wait() async -> ShutdownReason {
        await withCheckedContinuation { continuation in
            let reason = state.withLock { state -> ShutdownReason? in
                if let reason = state.reason { return reason }
                state.waiter = continuation
                return nil
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }

    /// Stops listening for signals.
    func cancel() {
        for source in signalSources { source.cancel() }
    }
}
