import Synchronization

/// A bounded queue of ``PreferencesEvent``s between a producer that must never wait
/// (prefsd's signals, delivered on the proxy's queue) and one consumer that may be slow.
///
/// **What a slow consumer gets.** The queue holds at most ``capacity`` events. When an
/// event arrives with the queue full, every event queued is dropped, and so is the new
/// one, and a single ``PreferencesEvent/reloadNeeded(domain:reason:)`` with a `nil` domain
/// takes their place: the consumer is told to load every domain it follows again, which
/// gives it everything the dropped events carried (a load reads prefsd's state after
/// them). Events that come after it are queued as usual; if the consumer falls behind
/// again, the queue is replaced again by one such event, so memory stays bounded however
/// slow the consumer is. ``PreferencesEvent/ownerChanged(previous:current:)`` and
/// ``PreferencesEvent/disconnected`` are never dropped: they are queued after the reload
/// event. A consumer that keeps up never sees a dropped event.
public final class PreferencesEventQueue: Sendable {
    /// The capacity of the queues the proxy makes for ``PreferencesProxy/events(in:resolving:capacity:)``.
    public static let defaultCapacity = 4096

    private struct State: Sendable {
        var events: [PreferencesEvent] = []
        /// Index of the next event to hand out (the array is compacted now and then).
        var head = 0
        var finished = false
        /// The consumer waiting for an event.
        var waiter: CheckedContinuation<PreferencesEvent?, Never>?
        /// How many times the queue overflowed.
        var overflows = 0
        var count: Int { events.count - head }
    }

    /// The most events held before the queue is replaced by one reload event.
    public let capacity: Int
    private let state = Mutex(State())
    /// Runs once when the queue finishes or is released; `ended` once it has.
    private let onEnd = Mutex<(work: (@Sendable () -> Void)?, ended: Bool)>((nil, false))

    /// A queue holding at most `capacity` (at least 1) events.
    public init(capacity: Int = defaultCapacity) {
        self.capacity = max(1, capacity)
    }

    deinit {
        end()
    }

    /// Runs `work` once when the queue is finished, its consuming task cancelled, or the
    /// queue released (at once if that has happened already).
    public func whenEnded(_ work: @escaping @Sendable () -> Void) {
        let ended = onEnd.withLock { state -> Bool in
            if !state.ended { state.work = work }
            return state.ended
        }
        if ended { work() }
    }

    /// How many times a slow consumer made the queue overflow.
    public var overflows: Int { state.withLock { $0.overflows } }

    /// Hands `event` to the consumer, or queues it; never waits.
    public func push(_ event: PreferencesEvent) {
        let waiter = state.withLock { state -> CheckedContinuation<PreferencesEvent?, Never>? in
            if state.finished { return nil }
            if let waiter = state.waiter {
                state.waiter = nil
                return waiter
            }
            if state.count >= capacity {
                state.overflows += 1
                let dropped = state.count + 1
                state.events = [
                    .reloadNeeded(
                        domain: nil,
                        reason:
                            "the subscriber fell \(dropped) events behind (more than the \(capacity) its queue holds): they were dropped; load every domain followed again"
                    )
                ]
                state.head = 0
                switch event {
                case .ownerChanged, .disconnected: state.events.append(event)
                default: break
                }
                return nil
            }
            state.events.append(event)
            return nil
        }
        waiter?.resume(returning: event)
    }

    /// Ends the queue: the consumer gets what is queued, then the end.
    public func finish() {
        let waiter = state.withLock { state -> CheckedContinuation<PreferencesEvent?, Never>? in
            state.finished = true
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: nil)
        end()
    }

    /// The next event, waiting for one; `nil` once the queue is finished and empty.
    /// One consumer at a time.
    public func next() async -> PreferencesEvent? {
        if let ready = take() { return ready }
        return await withCheckedContinuation { (continuation: CheckedContinuation<PreferencesEvent?, Never>) in
            let outcome = state.withLock { state -> PreferencesEvent?? in
                if state.count > 0 { return .some(takeLocked(&state)) }
                if state.finished { return .some(nil) }
                state.waiter = continuation
                return .none
            }
            if let outcome { continuation.resume(returning: outcome) }
        }
    }

    /// The events as an `AsyncStream` (one consumer): cancelling the consuming task, or
    /// dropping the stream, ends the queue.
    public var stream: AsyncStream<PreferencesEvent> {
        AsyncStream(unfolding: { [self] in await next() }, onCancel: { [self] in finish() })
    }

    private func take() -> PreferencesEvent? {
        state.withLock { state in state.count > 0 ? takeLocked(&state) : nil }
    }

    private func takeLocked(_ state: inout State) -> PreferencesEvent {
        let event = state.events[state.head]
        state.head += 1
        if state.head == state.events.count {
            state.events.removeAll(keepingCapacity: state.events.count <= 64)
            state.head = 0
        } else if state.head >= 1024 && state.head * 2 >= state.events.count {
            state.events.removeFirst(state.head)
            state.head = 0
        }
        return event
    }

    private func end() {
        let work = onEnd.withLock { state -> (@Sendable () -> Void)? in
            defer { state = (nil, true) }
            return state.work
        }
        work?()
    }
}
