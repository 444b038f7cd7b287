import Dispatch
import StandardExtras
import Synchronization

/// Gives back what a service's work mapped each time the work is over: once no call has
/// come for ``delay``, the heap's free blocks and the pages of the files it maps read-only
/// (``ProcessMemory/releaseFreedHeap()`` and ``ProcessMemory/releaseFilePages()``), so that
/// an idle service keeps mapped only what it has touched since, whatever it ran before: its
/// start, a new client's first calls (the first use of a type, a caller's check), a call
/// it answers once a day.
///
/// Nothing runs while the service is idle: a release is scheduled by the first call after
/// the last release, and put off while calls keep coming (a timer at most every ``delay``
/// while they do). What a release gives up comes back from the kernel's page cache, with a
/// minor fault per 64 KiB, when the next calls run that code again.
public final class IdleRelease: Sendable {
    /// How long without a call before a release.
    public let delay: Duration
    private let queue = DispatchQueue(label: "ProcessMemory.IdleRelease", qos: .utility)
    private let release: @Sendable () -> Void
    private let state = Mutex(State())

    private struct State {
        /// When the last call came, in `DispatchTime` nanoseconds.
        var lastCall: UInt64 = 0
        /// A release is scheduled.
        var scheduled = false
        /// ``IdleRelease/start(after:)`` was called: calls schedule releases from now on.
        var started = false
        /// Releases made, for tests.
        var releases = 0
    }

    /// Releases with `release` (by default the freed heap and the unwritten file pages)
    /// once no call has come for `delay`.
    public init(
        delay: Duration,
        release: @escaping @Sendable () -> Void = {
            ProcessMemory.releaseFreedHeap()
            ProcessMemory.releaseFilePages()
        }
    ) {
        self.delay = delay
        self.release = release
    }

    /// Makes the first release `settling` from now (put off while calls come), and lets
    /// every call after it schedule the next: the start's work, which goes on a while after
    /// the service answers, is over by then.
    public func start(after settling: Duration) {
        let first = state.withLock { state -> Bool in
            guard !state.started else { return false }
            state.started = true
            state.scheduled = true
            return true
        }
        if first { schedule(at: DispatchTime.now() + settling.dispatchInterval) }
    }

    /// Tells it a call has come: a release follows once none has come for ``delay``. Quick
    /// enough for every call: a lock taken and a timer scheduled for the first call after
    /// a release only.
    public func callCame() {
        let now = DispatchTime.now()
        let schedule = state.withLock { state -> Bool in
            state.lastCall = now.uptimeNanoseconds
            guard state.started, !state.scheduled else { return false }
            state.scheduled = true
            return true
        }
        if schedule { self.schedule(at: now + delay.dispatchInterval) }
    }

    /// The releases made so far.
    public var releases: Int { state.withLock { $0.releases } }

    private func schedule(at deadline: DispatchTime) {
        queue.asyncAfter(deadline: deadline) { [self] in due() }
    }

    /// At a scheduled time: releases when no call came for ``delay``, else waits until that
    /// long after the last one.
    private func due() {
        let now = DispatchTime.now().uptimeNanoseconds
        let later = state.withLock { state -> UInt64? in
            let quietFrom = state.lastCall &+ UInt64(max(delay.wholeNanoseconds, 0))
            if state.lastCall != 0, quietFrom > now { return quietFrom }
            // A call from now on schedules the next release.
            state.scheduled = false
            return nil
        }
        if let later {
            schedule(at: DispatchTime(uptimeNanoseconds: later))
            return
        }
        release()
        state.withLock { $0.releases += 1 }
    }
}
