import Foundation

/// Waits, at most `timeout`, for `process` to end, and returns its exit status; `nil` if it
/// still runs. Foundation's `waitUntilExit()` has no time bound, so a child that ignores a
/// signal, or an exit Foundation fails to notice, would hang a whole test run.
public func waitForExit(of process: Process, timeout: Duration = .seconds(30)) -> Int32? {
    let deadline = ContinuousClock.now + timeout
    while process.isRunning {
        guard ContinuousClock.now < deadline else { return nil }
        usleep(5_000)
    }
    return process.terminationStatus
}

/// Sends `signal` to `process` and waits for it to end; a process still running after
/// `timeout` is killed with SIGKILL. Returns its exit status, or `nil` if even SIGKILL did
/// not end it in time.
@discardableResult
public func stop(_ process: Process, signal: Int32 = SIGTERM, timeout: Duration = .seconds(20)) -> Int32? {
    guard process.isRunning else { return process.terminationStatus }
    kill(process.processIdentifier, signal)
    if let status = waitForExit(of: process, timeout: timeout) { return status }
    kill(process.processIdentifier, SIGKILL)
    _ = waitForExit(of: process, timeout: .seconds(10))
    return nil
}
