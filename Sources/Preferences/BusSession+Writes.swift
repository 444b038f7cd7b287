import DBus
import Dispatch
import PreferencesModel
import PreferencesProtocol

extension BusSession {
    /// What a caller is told when its write is answered.
    typealias Completion = @Sendable (Result<Void, PreferencesError>) -> Void

    /// Sets (or, with `nil`, removes) a key: the cache shows it at once, the write goes to
    /// the service without waiting, and `completion` runs with its outcome. A refused write
    /// is taken back from the cache, so the previous value shows again.
    func write(_ value: PropertyListValue?, key: String, domain: DomainName, completion: Completion? = nil) {
        guard let connection = connection(orReportTo: completion) else { return }
        let generation = mutate(domain: domain, keys: [key]) { $0.beginWrite(domain, key, value) }
        let message = value.map { Self.message(.write, [.string(domain.rawValue), .string(key), $0.dbusVariant]) }
            ?? Self.message(.remove, [.string(domain.rawValue), .string(key)])
        send(message, on: connection, completion: completion) { [self] in
            // After a success the service's Changed signal, sent before this answer, has
            // already brought the value into the domain.
            mutate(domain: domain, keys: [key]) { $0.endWrite(domain, key, generation: generation) }
        }
    }

    /// Calls a method that changes domains as a whole (ReplaceDomain, RemoveDomain,
    /// SetVolatileDomain, RemoveVolatileDomain), without waiting; its signals update the cache.
    func change(_ method: PreferencesMethod, _ body: [DBusValue], completion: Completion? = nil) {
        guard let connection = connection(orReportTo: completion) else { return }
        send(Self.message(method, body), on: connection, completion: completion)
    }

    /// The connection, or `nil` after reporting why there is none.
    private func connection(orReportTo completion: Completion?) -> DBusConnection? {
        do {
            return try connection()
        } catch {
            record(.failure(error), wasInFlight: false)
            completion?(.failure(error))
            return nil
        }
    }

    /// Sends a call counted as a write in flight until it is answered; `answered` runs
    /// first, then the count, then `completion`.
    private func send(
        _ message: DBusMessage, on connection: DBusConnection, completion: Completion?,
        answered: (@Sendable () -> Void)? = nil
    ) {
        writes.withLock { $0.inFlight += 1 }
        connection.call(message, timeout: Self.callTimeout) { [self] reply in
            answered?()
            let result = reply.map { _ in () }.mapError(PreferencesError.init)
            record(result, wasInFlight: true)
            completion?(result)
        }
    }

    /// Counts a finished write (or one that could not start) and wakes `synchronize()`.
    private func record(_ result: Result<Void, PreferencesError>, wasInFlight: Bool) {
        let waiters = writes.withLock { writes -> [DispatchSemaphore] in
            if case .failure(let error) = result { writes.failures.append(error) }
            if wasInFlight { writes.inFlight -= 1 }
            guard writes.inFlight == 0 else { return [] }
            defer { writes.waiters = [] }
            return writes.waiters
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Waits until every write sent so far is answered (durable on disk when it
    /// succeeded). Returns the failures since the last call, and forgets them.
    func waitForWrites() -> [PreferencesError] {
        let waiter = writes.withLock { writes -> DispatchSemaphore? in
            guard writes.inFlight > 0 else { return nil }
            let semaphore = DispatchSemaphore(value: 0)
            writes.waiters.append(semaphore)
            return semaphore
        }
        waiter?.wait()
        return writes.withLock { writes in
            defer { writes.failures = [] }
            return writes.failures
        }
    }
}

extension BusSession {
    /// Counts a write refused before it was sent, so `synchronize()` reports it.
    func recordRefusal(_ error: PreferencesError) {
        writes.withLock { $0.failures.append(error) }
    }
}
