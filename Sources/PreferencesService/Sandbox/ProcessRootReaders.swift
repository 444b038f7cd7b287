import Dispatch
import Foundation
import Synchronization

/// The threads that read process roots for ``CallerGate``: a read runs on an idle thread
/// when there is one, else on a new thread, up to ``limit`` threads, so a thread blocked on
/// a root that does not answer holds up no other read. Past ``limit`` busy threads reads
/// wait their turn (``CallerGate`` gives up on each after its time-out, whatever happens
/// here). Threads stay, idle, once started, so a read usually costs no thread creation.
final class ProcessRootReaders: Sendable {
    private struct State: Sendable {
        var jobs: [@Sendable () -> Void] = []
        var idle = 0
        var threads = 0
    }

    /// The most threads.
    let limit: Int
    private let state = Mutex(State())
    private let wake = DispatchSemaphore(value: 0)

    /// A pool of at most `limit` threads.
    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Runs `job` on a thread of the pool, as soon as one is free.
    func run(_ job: @escaping @Sendable () -> Void) {
        enum Start { case wakeIdle, newThread, queued }
        let start = state.withLock { state -> Start in
            state.jobs.append(job)
            if state.idle > 0 {
                state.idle -= 1
                return .wakeIdle
            }
            guard state.threads < limit else { return .queued }
            state.threads += 1
            return .newThread
        }
        switch start {
        case .wakeIdle: wake.signal()
        case .newThread: Thread.detachNewThread { [self] in work() }
        case .queued: break
        }
    }

    /// A thread's life: the jobs waiting, then idle until woken for more. Whoever wakes an
    /// idle thread counts it out of `idle` first, so each signal meets one waiting thread.
    private func work() {
        while true {
            let job = state.withLock { state -> (@Sendable () -> Void)? in
                if state.jobs.isEmpty {
                    state.idle += 1
                    return nil
                }
                return state.jobs.removeFirst()
            }
            if let job {
                job()
            } else {
                wake.wait()
            }
        }
    }
}
