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
        _ = value(forKey: key)
        let token = local.withLock { local -> UInt64 in
            local.nextToken += 1
            local.observers[local.nextToken] = Observer(key: key, handler: handler)
            return local.nextToken
        }
        return PreferencesObservation { [weak self] in
            self?.local.withLock { _ = $0.observers.removeValue(forKey: token) }
        }
    }

    /// Every change of an effective value this object reads, as an asynchronous sequence.
    /// Each access makes a new sequence, which ends when the object is released.
    public var changes: AsyncStream<PreferencesChange> {
        session.ensureLoaded(local.withLock { $0.layers.serviceDomains })
        let (stream, continuation) = AsyncStream<PreferencesChange>.makeStream(bufferingPolicy: .bufferingNewest(4096))
        let token = local.withLock { local -> UInt64 in
            local.nextToken += 1
            local.streams[local.nextToken] = continuation
            return local.nextToken
        }
        continuation.onTermination = { [weak self] _ in
            self?.local.withLock { _ = $0.streams.removeValue(forKey: token) }
        }
        return stream
    }

    /// Hands changes (maybe none) to observers and streams and posts
    /// `didChangeNotification`, on the delivery queue.
    func deliver(_ changes: [PreferencesChange]) {
        let (observers, streams) = local.withLock { local in
            local.resolved = [:]
            return (Array(local.observers.values), Array(local.streams.values))
        }
        session.deliver { [self] in
            for change in changes {
                for observer in observers where observer.key == change.key { observer.handler(change.value) }
                for stream in streams { stream.yield(change) }
            }
            NotificationCenter.default.post(name: Self.didChangeNotification, object: self)
        }
    }
}
