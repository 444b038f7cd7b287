import DBus
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// Re-reading what a change left out, before it is delivered to the subscribers that want
/// it complete.
extension SignalRouter {
    /// The event for a signal, with the keys it invalidated re-read: each key with `Read`
    /// (a persistent domain), or the whole domain with `ReadDomain` / `ReadVolatileDomain`
    /// when it invalidated `""` or is volatile (there is no `Read` of a volatile key).
    func resolve(_ signal: ServiceSignal, completion: @escaping @Sendable (PreferencesEvent) -> Void) {
        guard case .changed(let change, let volatile) = signal, !change.invalidated.isEmpty else {
            return completion(signal.rawEvent)
        }
        let wrap: @Sendable (DomainChange) -> PreferencesEvent = { change in
            volatile ? PreferencesEvent.volatileChanged(change) : PreferencesEvent.changed(change)
        }
        let failed: @Sendable (PreferencesProxyError) -> Void = { error in
            completion(.reloadNeeded(domain: change.domain, reason: "could not re-read what a change of \(change.domain) left out: \(error.description)"))
        }
        let invalidated = change.invalidated
        if volatile || invalidated.contains("") {
            let request = volatile ? PreferencesCall.readVolatileDomain(change.domain) : PreferencesCall.readDomain(change.domain)
            return perform(request) { result in
                var complete = change
                switch result {
                case .failure(.refused(.notFound)):
                    complete.changed = [:]
                case .failure(let error):
                    return failed(error)
                case .success(let whole):
                    complete.changed = whole
                }
                if invalidated.contains("") {
                    complete.removed = []
                    complete.isWholeDomain = true
                } else {
                    let whole = complete.changed
                    complete.changed = change.changed
                    for key in invalidated {
                        if let value = whole[key] { complete.changed[key] = value } else { complete.removed.append(key) }
                    }
                }
                completion(wrap(complete))
            }
        }
        // One Read per key, all at once; the change is handed on when the last answers.
        let answers = Mutex((left: invalidated.count, values: [String: PropertyListValue](), failure: PreferencesProxyError?.none))
        for key in invalidated {
            perform(PreferencesCall.read(change.domain, key)) { result in
                let finished = answers.withLock { answers -> Bool in
                    switch result {
                    case .success(let value): answers.values[key] = value
                    case .failure(.refused(.notFound)): break
                    case .failure(let error): if answers.failure == nil { answers.failure = error }
                    }
                    answers.left -= 1
                    return answers.left == 0
                }
                guard finished else { return }
                let (values, failure) = answers.withLock { ($0.values, $0.failure) }
                if let failure { return failed(failure) }
                var complete = change
                for key in invalidated {
                    if let value = values[key] { complete.changed[key] = value } else { complete.removed.append(key) }
                }
                completion(wrap(complete))
            }
        }
    }

    private func perform<Reply>(_ request: PreferencesRequest<Reply>, completion: @escaping @Sendable (Result<Reply, PreferencesProxyError>) -> Void) {
        PreferencesProxy.perform(request, on: connection, timeout: PreferencesProxy.defaultTimeout, completion: completion)
    }
}
