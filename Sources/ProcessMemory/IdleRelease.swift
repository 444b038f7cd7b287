import Dispatch
import StandardExtras
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// Gives back what a service's work mapped each time the work is over: once no call has
/// come for ``delay``, the heap's free blocks and the pages of the files it maps read-only
/// (``ProcessMemory/releaseFreedHeap()`` and ``ProcessMemory/releaseFilePages()``), so that
/// an idle service keeps mapped only what it has touched since, whatever it ran before: its
/// start, a new client's first calls (the first use of a type, a caller's check), a call
/// it answers once a day.
///
/// Nothing runs while the service is idle: a release is scheduled by the first call after
/// the last release, and put off while calls keep coming (a timer at most every ``delay``
/// while they do). Work a service does on its own a while after its calls (a file written
/// ahead, a checkpoint) maps pages again with no call to schedule a release: so ``delay``
/// after each release the process's minor faults are counted, and when more than
/// ``faultsLeftAlone`` came since, it releases again, up to ``followUps`` times. What a
/// release gives up comes back from the kernel's page cache, with a minor fault per 64 KiB,
/// when the next calls run that code again.
public final class IdleRelease: Sendable {
    /// How long without a call before a release.
    public let delay: Duration
    /// Minor faults after a release that are no reason for another: an idle thread's
    /// timer (libdispatch's, once a second) maps back the few pages of its own code.
    static let faultsLeftAlone = 16
    /// Releases at most after a release with no call between them.
    static let followUps = 3
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
        releaseAndFollow(followUp: 0)
    }

    /// Releases, then checks ``delay`` later whether pages came back with no call (see the
    /// type's comment).
    private func releaseAndFollow(followUp: Int) {
        release()
        state.withLock { $0.releases += 1 }
        let faults = Self.minorFaults()
        guard followUp < Self.followUps else { return }
        queue.asyncAfter(deadline: .now() + delay.dispatchInterval) { [self] in
            // A call since has scheduled a release of its own.
            guard !state.withLock({ $0.scheduled }), Self.minorFaults() - faults > Self.faultsLeftAlone else { return }
            releaseAndFollow(followUp: followUp + 1)
        }
    }

    /// The process's minor page faults so far (`getrusage`).
    private static func minorFaults() -> Int {
        var usage = rusage()
        guard getrusage(RUSAGE_SELF.rawValue, &usage) == 0 else { return 0 }
        return usage.ru_minflt
    }
}
