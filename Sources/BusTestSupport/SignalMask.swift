#if canImport(Glibc)
    import Glibc
#endif

/// Runs `body` (which starts a process) with the signals a process manager needs unblocked
/// on this thread: a started process inherits its parent thread's mask, and the threads of
/// a test runner block most signals. A `dbus-daemon` started with `SIGCHLD` blocked never
/// learns that a service it started has exited, and keeps the caller of
/// `StartServiceByName` waiting until its time-out, where a session bus answers at once
/// that the process exited; one started with `SIGTERM` blocked does not end when told to.
public func withProcessSignalsUnblocked<Result>(_ body: () throws -> Result) rethrows -> Result {
    var unblocked = sigset_t()
    sigemptyset(&unblocked)
    for signal in [SIGCHLD, SIGTERM, SIGINT, SIGHUP] { sigaddset(&unblocked, signal) }
    var previous = sigset_t()
    pthread_sigmask(SIG_UNBLOCK, &unblocked, &previous)
    defer { pthread_sigmask(SIG_SETMASK, &previous, nil) }
    return try body()
}
