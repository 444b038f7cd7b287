import Dispatch
import Synchronization

/// An ordered inbox: items are handed to one handler, one at a time and in the order they
/// were put in, on a serial queue of its own. The handler may hold the next item back
/// while it finishes one asynchronously (``Step/held``), and lets the inbox go on with the
/// `resume` it was given. A barrier (``afterHandled(_:)``) runs once every item put in
/// before it has been handled.
///
/// Nothing here waits on Swift's concurrency threads: a caller may block its own thread
/// until a barrier runs.
final class SignalInbox<Item: Sendable>: Sendable {
    /// What the handler says after an item.
    enum Step: Sendable {
        /// Go on with the next item.
        case next
        /// Hold the next item back until `resume` is called.
        case held
    }

    /// Handles one item; `resume(work)` (for a held item) runs `work` on the inbox's queue
    /// and then goes on with the next item.
    typealias Handler = @Sendable (Item, _ resume: @escaping @Sendable (@escaping @Sendable () -> Void) -> Void) -> Step

    private enum Entry: Sendable {
        case item(Item)
        case barrier(@Sendable () -> Void)
    }

    private struct State: Sendable {
        var entries: [Entry] = []
        var next = 0
        /// The queue is draining (or an item is held).
        var busy = false
        var closed = false
    }

    private let state = Mutex(State())
    private let handler = Mutex<Handler?>(nil)
    private let queue: DispatchQueue

    /// An inbox draining on a queue labelled `label`; it hands items on once it has a handler.
    init(label: String) {
        queue = DispatchQueue(label: label)
    }

    /// Sets the one handler of the items.
    func setHandler(_ handler: @escaping Handler) {
        self.handler.withLock { $0 = handler }
    }

    /// Puts `item` in, after everything put in before it (dropped once the inbox is closed).
    func put(_ item: Item) {
        enqueue(.item(item))
    }

    /// Calls `done` on the inbox's queue once every item put in so far has been handled (at
    /// once when the inbox is closed).
    func afterHandled(_ done: @escaping @Sendable () -> Void) {
        enqueue(.barrier(done))
    }

    /// Drops what is left and takes nothing more; the barriers left run now. Idempotent.
    func close() {
        let barriers = state.withLock { state -> [@Sendable () -> Void] in
            state.closed = true
            // What follows `next`, none at all once the inbox has been emptied.
            let left = state.entries.dropFirst(state.next)
            state.entries = []
            state.next = 0
            return left.compactMap { if case .barrier(let done) = $0 { done } else { nil } }
        }
        for done in barriers { done() }
    }

    private func enqueue(_ entry: Entry) {
        let start = state.withLock { state -> Bool? in
            guard !state.closed else { return nil }
            state.entries.append(entry)
            defer { state.busy = true }
            return !state.busy
        }
        switch start {
        case nil: if case .barrier(let done) = entry { done() }
        case true?: queue.async { [self] in drain() }
        case false?: break
        }
    }

    /// The next entry, or `nil` (and not busy any more) when there is none.
    private func takeNext() -> Entry? {
        state.withLock { state in
            guard state.next < state.entries.count else {
                state.entries = []
                state.next = 0
                state.busy = false
                return nil
            }
            defer { state.next += 1 }
            return state.entries[state.next]
        }
    }

    /// Hands the entries on in order, on the queue; stops at a held item.
    private func drain() {
        while let entry = takeNext() {
            switch entry {
            case .barrier(let done):
                done()
            case .item(let item):
                guard let handle = handler.withLock({ $0 }) else { continue }
                let step = handle(item) { [self] work in
                    queue.async { [self] in
                        work()
                        drain()
                    }
                }
                if case .held = step { return }
            }
        }
    }
}
