import Foundation
import PreferencesModel
import Synchronization

/// Keeps an observation alive; cancel it, or let it go, to stop it.
public final class PreferencesObservation: Sendable {
    private let cancelAction = Mutex<(@Sendable () -> Void)?>(nil)

    init(_ cancel: @escaping @Sendable () -> Void) {
        cancelAction.withLock { $0 = cancel }
    }

    deinit { cancel() }

    /// Stops the observation; the handler is not called again.
    public func cancel() {
        let action = cancelAction.withLock { action -> (@Sendable () -> Void)? in
            defer { action = nil }
            return action
        }
        action?()
    }
}

extension Preferences {
    /// Calls `handler` with the new effective value of `key` each time it changes, whether
    /// this process or another changed it, and only when it really changes after the search
    /// list (a write shadowed by the argument domain calls nothing). Handlers run on a
    /// private serial queue, in the order of the changes.
    /// - Returns: the observation; it lasts until cancelled or released.
    public func observe(_ key: String, _ handler: @escaping @Sendable (PropertyListValue?) -> Void) -> PreferencesObservation {
        // Load the domains now, so the first change reported is a real one.
        let current = value(forKey: key)
        let token = local.withLock { local -> UInt64 in
            local.nextToken += 1
            local.observers[local.nextToken] = Observer(key: key, handler: handler, lastTold: current)
            return local.nextToken
        }
        return PreferencesObservation { [weak self] in
            self?.local.withLock { _ = $0.observers.removeValue(forKey: token) }
        }
    }

    /// Every change of an effective value this object reads, as an asynchronous sequence.
    /// Each access makes a new sequence, which ends when the object is released.
    public var changes: AsyncStream<PreferencesChange> {
        let layers = local.withLock { $0.layers }
        session.ensureLoaded(layers.serviceDomains)
        let driver = session.currentDriver
        var seen: [String: PropertyListValue?] = [:]
        for key in layers.allKeys(in: driver) { seen[key] = .some(layers.resolve(key, in: driver)) }
        let (stream, continuation) = AsyncStream<PreferencesChange>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let token = local.withLock { local -> UInt64 in
            local.nextToken += 1
            local.streams[local.nextToken] = continuation
            if local.streamSeen == nil { local.streamSeen = seen }
            return local.nextToken
        }
        continuation.onTermination = { [weak self] _ in
            self?.local.withLock { local in
                local.streams.removeValue(forKey: token)
                if local.streams.isEmpty { local.streamSeen = nil }
            }
        }
        return stream
    }

    /// Tells observers and streams the keys whose effective value differs from the one
    /// told to them last, and posts `didChangeNotification` when `posting` or when one
    /// did. Called on the session's delivery queue only, so the values are told in order.
    func evaluate(_ keys: [String], posting: Bool) {
        let (layers, watched) = local.withLock { local -> (Layers, Bool) in
            let watched = !local.streams.isEmpty || local.observers.values.contains { keys.contains($0.key) }
            return (local.layers, watched)
        }
        var told: [(@Sendable (PropertyListValue?) -> Void, PropertyListValue?)] = []
        var changes: [PreferencesChange] = []
        var streams: [AsyncStream<PreferencesChange>.Continuation] = []
        if watched {
            let driver = session.currentDriver
            let now = keys.map { layers.resolve($0, in: driver) }
            local.withLock { local in
                for (token, observer) in local.observers {
                    guard let index = keys.firstIndex(of: observer.key), now[index] != observer.lastTold else { continue }
                    local.observers[token]?.lastTold = now[index]
                    told.append((observer.handler, now[index]))
                }
                guard local.streamSeen != nil else { return }
                for (index, key) in keys.enumerated() where (local.streamSeen?[key] ?? nil) != now[index] {
                    local.streamSeen?[key] = .some(now[index])
                    changes.append(PreferencesChange(key: key, value: now[index]))
                }
                streams = Array(local.streams.values)
            }
        }
        for (handler, value) in told { handler(value) }
        for change in changes { for stream in streams { stream.yield(change) } }
        if posting || !told.isEmpty || !changes.isEmpty {
            NotificationCenter.default.post(name: Self.didChangeNotification, object: self)
        }
    }
}
