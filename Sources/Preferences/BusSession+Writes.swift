import ClientDriver
import Dispatch
import PreferencesClient
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

extension BusSession {
    /// What a caller is told when its write is answered.
    typealias Completion = @Sendable (Result<Void, PreferencesError>) -> Void

    /// A write's ticket: the connection it went out on, and the engine's ticket.
    struct Ticket: Hashable, Sendable {
        var connection: UInt64
        var ticket: UInt64
    }

    /// The outcome of writes, for their callers and for `synchronize()`.
    struct Writes: Sendable {
        /// Callers waiting for a write's outcome.
        var completions: [Ticket: Completion] = [:]
        /// Submissions whose caller has not registered its completion yet, and the outcomes
        /// that came meanwhile (kept only while one is under way).
        var registering = 0
        var early: [Ticket: Result<Void, PreferencesError>] = [:]
        /// The failures since `synchronize()` last asked.
        var failures: [PreferencesError] = []
        /// `synchronize()` calls waiting for every write to be answered.
        var waiters: [DispatchSemaphore] = []
    }

    /// Sets (or, with `nil`, removes) a key: the engine shows it at once, in every object of
    /// the process, and sends it on the domain's lane (merged with the other writes of the
    /// domain made while one is in flight); `completion` runs with its outcome. A refused
    /// write is taken back, so the previous value shows again.
    func write(
        _ value: PropertyListValue?, key: String, domain: DomainName, origin: Preferences?, completion: Completion? = nil
    ) {
        let clientDomain = ClientDomain(domain.rawValue)
        submit(clientDomain, keys: [key], origin: origin, completion: completion) { driver in
            driver.submit([(key: key, value: value)], in: clientDomain)
        }
    }

    /// Replaces (`values`) or removes (`nil`) a whole domain, persistent or volatile: the
    /// engine shows it at once and sends it after the writes of the domain made before it;
    /// `completion` runs with its outcome.
    func replace(
        _ domain: ClientDomain, with values: [String: PropertyListValue]?, origin: Preferences?, completion: Completion? = nil
    ) {
        submit(domain, keys: nil, origin: origin, completion: completion) { driver in
            driver.submitReplace(domain, with: values)
        }
    }

    /// Loads the domain (the engine changes only what it knows), makes the change, tells the
    /// objects what it changed and registers `completion` for its outcome.
    /// - Parameter keys: the keys written, or `nil` for a whole-domain change.
    /// - Returns: whether the change was made (else its failure is reported).
    @discardableResult
    private func submit(
        _ domain: ClientDomain, keys: [String]?, origin: Preferences?, completion: Completion?,
        _ change: (ClientDriver) -> UInt64?
    ) -> Bool {
        let driver: ClientDriver, connection: UInt64
        do {
            (driver, connection) = try connect()
        } catch {
            report(error, to: completion)
            return false
        }
        guard ensureLoaded([domain]) else {
            let reason = driver.loadFailure(of: domain) ?? .serviceUnavailable("prefsd did not answer the reading of \(domain.name)")
            report(reason.isServiceUnavailable ? reason : .serviceUnavailable(reason.description), to: completion)
            return false
        }
        let name = DomainName(known: domain.name)
        let before = keys.map { keys in keys.map { driver.value($0, in: domain) } } ?? []
        let beforeEntries = keys == nil ? driver.entries(of: domain) : [:]
        if completion != nil { writes.withLock { $0.registering += 1 } }
        guard let ticket = change(driver) else {
            if completion != nil { writes.withLock { $0.registering -= 1 } }
            let forced = driver.forcedKeys(in: domain)
            report(
                PreferencesError(
                    .forced(
                        "\(domain.name) has keys the administrator's managed preferences force (\(forced.sorted().joined(separator: ", "))); they cannot be changed"
                    )), to: completion)
            return false
        }
        if let completion {
            let key = Ticket(connection: connection, ticket: ticket)
            let early = writes.withLock { writes -> Result<Void, PreferencesError>? in
                writes.registering -= 1
                defer { if writes.registering == 0 { writes.early = [:] } }
                if let outcome = writes.early.removeValue(forKey: key) { return outcome }
                writes.completions[key] = completion
                return nil
            }
            if let early { completion(early) }
        }
        // The objects searching the domain hear of it; the one it was made through always does.
        let changed: [String]
        let domainChanged: Bool
        if let keys {
            changed = keys
            domainChanged = zip(keys, before).contains { driver.value($0.0, in: domain) != $0.1 }
        } else {
            let after = driver.entries(of: domain)
            changed = Array(Set(beforeEntries.keys).union(after.keys))
            domainChanged = after != beforeEntries
        }
        notifyObjects(domain.isVolatile ? nil : name, keys: domain.isVolatile ? [] : changed, posting: domainChanged, origin: origin)
        return true
    }

    /// The writes with these tickets ended: their callers hear of it, a failure is kept for
    /// `synchronize()`.
    func ended(_ tickets: [UInt64], connection: UInt64, failure: PreferencesProxyError?) {
        let outcome: Result<Void, PreferencesError> = failure.map { .failure($0) } ?? .success(())
        let completions = writes.withLock { writes -> [Completion] in
            if let failure { writes.failures.append(failure) }
            var completions: [Completion] = []
            for ticket in tickets {
                let key = Ticket(connection: connection, ticket: ticket)
                if let completion = writes.completions.removeValue(forKey: key) {
                    completions.append(completion)
                } else if writes.registering > 0 {
                    writes.early[key] = outcome
                }
            }
            return completions
        }
        for completion in completions { completion(outcome) }
    }

    /// Reports a write that could not be made to its caller and to `synchronize()`.
    private func report(_ error: PreferencesError, to completion: Completion?) {
        recordRefusal(error)
        completion?(.failure(error))
    }

    /// Counts a write refused before it was sent, so `synchronize()` reports it.
    func recordRefusal(_ error: PreferencesError) {
        writes.withLock { $0.failures.append(error) }
    }

    /// Wakes the `synchronize()` calls waiting for writes.
    func wakeWriteWaiters() {
        let waiters = writes.withLock { writes in
            defer { writes.waiters = [] }
            return writes.waiters
        }
        for waiter in waiters { waiter.signal() }
    }

    /// Waits until every write made so far is answered (durable on disk when it
    /// succeeded), sending at once the calls that wait for the flush interval. Returns the
    /// failures since the last call, and forgets them.
    func waitForWrites() -> [PreferencesError] {
        if let driver = currentDriver {
            driver.flushingAtOnce {
                while driver.hasPendingWrites(), currentDriver === driver {
                    let waiter = DispatchSemaphore(value: 0)
                    writes.withLock { $0.waiters.append(waiter) }
                    // Settled before the waiter was in place: nobody signals it.
                    guard driver.hasPendingWrites() else { break }
                    // Each call has its time-out; look again now and then all the same.
                    _ = waiter.wait(timeout: .now() + .seconds(1))
                }
            }
        }
        return writes.withLock { writes in
            defer { writes.failures = [] }
            return writes.failures
        }
    }
}
