import Foundation
import Synchronization

/// A wait in a test that did not end within its bound: the test fails with this, naming
/// what it waited for, instead of hanging the run.
public struct DeadlineExceeded: Error, CustomStringConvertible {
    /// What the test was waiting for.
    public let what: String
    /// The bound that passed.
    public let timeout: Duration

    /// A sentence for the test's failure.
    public var description: String { "\(what) did not happen within \(timeout)" }
}

/// A continuation that may be resumed any number of times (the first resume counts) and
/// that ``withDeadline(_:_:body:)`` resumes with ``DeadlineExceeded`` when its bound passes.
/// Its methods have the names of `CheckedContinuation`'s, so a bounded wait reads like an
/// unbounded one.
public final class BoundedContinuation<Value: Sendable>: Sendable {
    private let continuation: Mutex<CheckedContinuation<Value, any Error>?>

    init(_ continuation: CheckedContinuation<Value, any Error>) {
        self.continuation = Mutex(continuation)
    }

    /// Ends the wait with `value`, unless it already ended.
    public func resume(returning value: Value) {
        resume(with: .success(value))
    }

    /// Ends the wait with `error`, unless it already ended.
    public func resume(throwing error: any Error) {
        resume(with: .failure(error))
    }

    /// Ends the wait with `result`, unless it already ended.
    public func resume(with result: Result<Value, any Error>) {
        continuation.withLock { $0.take() }?.resume(with: result)
    }
}

extension BoundedContinuation where Value == Void {
    /// Ends the wait, unless it already ended.
    public func resume() {
        resume(returning: ())
    }
}

/// Calls `body` with a continuation and waits until something resumes it, or until `timeout`
/// passes: then it throws ``DeadlineExceeded`` naming `what`. The bounded form of
/// `withCheckedContinuation`, for waits on callbacks that might never come.
public func withDeadline<Value: Sendable>(
    _ timeout: Duration = .seconds(30), _ what: String = "the awaited callback",
    body: (BoundedContinuation<Value>) -> Void
) async throws -> Value {
    let timer = Mutex<Task<Void, Never>?>(nil)
    defer { timer.withLock { $0?.cancel() } }
    return try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Value, any Error>) in
        let bounded = BoundedContinuation(continuation)
        timer.withLock {
            $0 = Task {
                try? await Task.sleep(for: timeout)
                if !Task.isCancelled { bounded.resume(throwing: DeadlineExceeded(what: what, timeout: timeout)) }
            }
        }
        body(bounded)
    }
}

/// Runs `operation` and returns its result, or throws ``DeadlineExceeded`` naming `what`
/// when it has not finished within `timeout`. The operation is then cancelled, but not
/// waited for: one that ignores cancellation cannot hang the test.
public func withDeadline<Value: Sendable>(
    _ timeout: Duration = .seconds(30), _ what: String = "the awaited operation",
    operation: @escaping @Sendable () async throws -> Value
) async throws -> Value {
    let work = Mutex<Task<Void, Never>?>(nil)
    defer { work.withLock { $0?.cancel() } }
    return try await withDeadline(timeout, what) { (done: BoundedContinuation<Value>) in
        work.withLock {
            $0 = Task {
                do { done.resume(returning: try await operation()) } catch { done.resume(throwing: error) }
            }
        }
    }
}

/// Polls `condition` every 10 ms until it holds or `timeout` passes (a bound for a stalled
/// machine, not a measure of speed); returns its last answer.
public func eventually(timeout: Duration = .seconds(20), _ condition: () async throws -> Bool) async rethrows -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if try await condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return try await condition()
}
