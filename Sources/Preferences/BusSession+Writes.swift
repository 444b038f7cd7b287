import DBus
import Dispatch
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy

extension BusSession {
    /// What a caller is told when its write is answered.
    typealias Completion = @Sendable (Result<Void, PreferencesError>) -> Void

    /// Sets (or, with `nil`, removes) a key: the cache shows it at once, in every object of
    /// the process, and the write goes to the service in the background (merged with the
    /// other writes of the domain made while one is in flight, see `WriteLane`); `completion`
    /// runs with its outcome. A refused write is taken back from the cache, so the previous
    /// value shows again.
    func write(
        _ value: PropertyListValue?, key: String, domain: DomainName, origin: Preferences?, completion: Completion? = nil
    ) {
        guard connection(orReportTo: completion) != nil else { return }
        let generation = mutate(domain: domain, keys: [key], origin: origin) { $0.beginWrite(domain, key, value) }
        enqueue(domain, .key(key, PendingKey(value: value, generation: generation, completions: completion.map { [$0] } ?? [])))
    }

    /// Replaces (`values`) or removes (`nil`) a persistent domain: the cache shows it at once,
    /// the call goes to the service after the writes of the domain made before it.
    func replaceDomain(_ domain: DomainName, with values: [String: PropertyListValue]?, origin: Preferences?) {
        guard connection(orReportTo: nil) != nil else { return }
        let generation = mutate(domain: domain, origin: origin) { $0.beginReplace(domain, values ?? [:]) }
        let message = values.map { PreferencesCall.replaceDomain(domain.rawValue, $0).message }
            ?? PreferencesCall.removeDomain(domain.rawValue).message
        enqueue(domain, .call(message) { [self] (_: Result<DBusMessage, DBusError>) in
            // After a success the service's signals, sent before this answer, have brought
            // the new contents into a loaded domain; a refusal shows the old ones again.
            mutate(domain: domain) { $0.endReplace(domain, generation: generation) }
        })
    }

    /// Calls a method of the volatile namespace without waiting; `answered` runs with the
    /// outcome before `synchronize()` hears of it.
    func sendVolatile(_ message: DBusMessage, answered: @escaping @Sendable (Bool) -> Void) {
        guard let connection = connection(orReportTo: nil) else { return answered(false) }
        writes.withLock { $0.inFlight += 1 }
        connection.call(message, timeout: Self.callTimeout) { [self] reply in
            let result = reply.map { _ in () }.mapError(PreferencesError.init)
            answered((try? result.get()) != nil)
            record(result, wasInFlight: true)
        }
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

    // MARK: The lanes

    /// Queues an operation on its domain's lane: a key write joins the key batch at the end
    /// of the lane when there is one, and a new operation is counted in flight.
    private func enqueue(_ domain: DomainName, _ item: LaneItem) {
        writes.withLock { writes in
            var lane = writes.lanes[domain] ?? WriteLane()
            if lane.merge(item) == false {
                writes.inFlight += 1
            }
            writes.lanes[domain] = lane
        }
        pump(domain)
    }

    /// Sends the next operation of a domain's lane when none is in flight, a key batch no
    /// sooner than `WriteLane.interval` after the previous one (unless `synchronize()` waits).
    private func pump(_ domain: DomainName) {
        let now = ContinuousClock.now
        let next = writes.withLock { writes -> WriteLane.Operation? in
            guard var lane = writes.lanes[domain] else { return nil }
            defer { writes.lanes[domain] = lane }
            switch lane.next(now: now, flushing: writes.flushing > 0) {
            case .send(let operation): return operation
            case .wait(let delay):
                let (seconds, attoseconds) = delay.components
                let nanoseconds = Int(seconds) * 1_000_000_000 + Int(attoseconds / 1_000_000_000)
                DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(nanoseconds)) { [weak self] in
                    self?.writes.withLock { $0.lanes[domain]?.timerArmed = false }
                    self?.pump(domain)
                }
                return nil
            case .nothing: return nil
            }
        }
        guard let next else { return }
        let message = next.message(domain)
        let finish: @Sendable (Result<DBusMessage, DBusError>) -> Void = { [self] reply in
            let result = reply.map { _ in () }.mapError(PreferencesError.init)
            if case .keys(let batch) = next.payload, batch.count > 1, case .failure(let error) = result, error.concernsValues {
                // One bad value must not take the others with it: each key is sent again alone.
                writes.withLock { writes in
                    writes.lanes[domain, default: WriteLane()].busy = false
                    writes.inFlight += (writes.lanes[domain]?.split(next) ?? 1) - 1
                }
                return pump(domain)
            }
            if case .keys(let batch) = next.payload {
                // After a success the service's Changed signal, sent before this answer, has
                // already brought the values into the domain; a refusal takes them back.
                mutate(domain: domain, keys: Set(batch.keys)) { cache in
                    for (key, pending) in batch { cache.endWrite(domain, key, generation: pending.generation) }
                }
            }
            next.answered?(reply)
            writes.withLock { $0.lanes[domain, default: WriteLane()].busy = false }
            record(result, wasInFlight: true)
            if case .keys(let batch) = next.payload {
                for completion in batch.values.flatMap(\.completions) { completion(result) }
            }
            pump(domain)
        }
        do {
            try connection().call(message, timeout: Self.callTimeout, completion: finish)
        } catch {
            finish(.failure(.disconnected))
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

    /// Waits until every write made so far is answered (durable on disk when it succeeded),
    /// sending at once the batches that wait for their interval. Returns the failures since
    /// the last call, and forgets them.
    func waitForWrites() -> [PreferencesError] {
        let (waiter, waiting) = writes.withLock { writes -> (DispatchSemaphore?, [DomainName]) in
            guard writes.inFlight > 0 else { return (nil, []) }
            let semaphore = DispatchSemaphore(value: 0)
            writes.waiters.append(semaphore)
            writes.flushing += 1
            return (semaphore, Array(writes.lanes.keys))
        }
        if let waiter {
            for domain in waiting { pump(domain) }
            waiter.wait()
            writes.withLock { $0.flushing -= 1 }
        }
        return writes.withLock { writes in
            defer { writes.failures = [] }
            return writes.failures
        }
    }

    /// Counts a write refused before it was sent, so `synchronize()` reports it.
    func recordRefusal(_ error: PreferencesError) {
        writes.withLock { $0.failures.append(error) }
    }
}
