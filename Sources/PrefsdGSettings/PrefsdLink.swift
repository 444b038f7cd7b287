import Dispatch
import PreferencesModel
import PreferencesProxy
import Synchronization

/// Every word the backend says to prefsd, through ``PreferencesProxy``: no other file of
/// the module touches the bus. Calls block the calling thread (the backend makes them on
/// its own queues, never on the host's main loop except for the one bounded wait of a
/// first read); subscriptions call back on the proxy's task.
final class PrefsdLink: Sendable {
    /// How long loading a domain may take, activation of prefsd included.
    static let loadTimeout: Duration = .seconds(5)
    /// How long one write may take before it counts as failed.
    static let writeTimeout: Duration = PreferencesProxy.defaultTimeout

    private enum Connection: Sendable {
        case notYet
        /// One caller connects, outside the lock; the group is left when it is done.
        case connecting(DispatchGroup)
        case open(PreferencesProxy)
        case failed(PreferencesProxyError)
    }

    private let connection = Mutex(Connection.notYet)

    /// The proxy, connecting on first use (once per process: GLib keeps one backend); a
    /// connection that failed (no bus) stays failed. The connection is made without the
    /// lock, so that ``isUsable`` (asked on the host's thread) never waits for it.
    private func proxy() throws(PrefsdGSettingsError) -> PreferencesProxy {
        enum Step { case ready(PreferencesProxy), failed(PreferencesProxyError), wait(DispatchGroup), connect(DispatchGroup) }
        while true {
            let step = connection.withLock { connection -> Step in
                switch connection {
                case .open(let proxy): return .ready(proxy)
                case .failed(let error): return .failed(error)
                case .connecting(let done): return .wait(done)
                case .notYet:
                    let done = DispatchGroup()
                    done.enter()
                    connection = .connecting(done)
                    return .connect(done)
                }
            }
            switch step {
            case .ready(let proxy): return proxy
            case .failed(let error): throw .prefsd(error)
            case .wait(let done): done.wait()
            case .connect(let done):
                let made = Result { () throws(PreferencesProxyError) in try PreferencesProxy.connect() }
                // Closed (or lost) meanwhile: the new connection is not wanted.
                let unwanted = connection.withLock { connection -> PreferencesProxy? in
                    guard case .connecting = connection else { return try? made.get() }
                    switch made {
                    case .success(let proxy): connection = .open(proxy)
                    case .failure(let error): connection = .failed(error)
                    }
                    return nil
                }
                unwanted?.close()
                done.leave()
            }
        }
    }

    /// Whether calls can still be made (false once the bus could not be reached or went away).
    var isUsable: Bool {
        connection.withLock { if case .failed = $0 { false } else { true } }
    }

    /// Marks the connection lost: later calls fail at once.
    func connectionLost() {
        connection.withLock { $0 = .failed(.serviceUnavailable("the connection to the session bus was lost")) }
    }

    /// Starts following `domain`'s changes without waiting: the calls that put the
    /// subscription in force are queued, and ``load(_:)`` called next goes out behind
    /// them, so subscribing and loading cost one round trip. `handler` gets every event
    /// about the domain, in commit order, from the moment ``confirm(_:)`` returns.
    func subscribe(_ domain: String, _ handler: @escaping @Sendable (PreferencesEvent) -> Void) throws(PrefsdGSettingsError) -> PreferencesSubscription {
        let proxy = try proxy()
        do throws(PreferencesProxyError) {
            return try proxy.startObserving([domain], handler)
        } catch {
            throw .prefsd(error)
        }
    }

    /// Returns once `subscription` is in force (at once after a ``load(_:)`` answered
    /// behind it); throws why it could not be (it is then ended).
    func confirm(_ subscription: PreferencesSubscription) throws(PrefsdGSettingsError) {
        do throws(PreferencesProxyError) {
            try subscription.confirmBlocking()
        } catch {
            throw .prefsd(error)
        }
    }

    /// What ``load(_:)`` read of a domain.
    struct Snapshot: Sendable {
        /// The persistent domain's values (empty when it does not exist).
        var values: [String: PropertyListValue]
        /// The serial of prefsd's answer (0 when the domain does not exist): signals with a
        /// higher serial were sent after it.
        var serial: UInt32
        /// The keys an administrator forces in it, and the serial of that answer.
        var forced: Set<String>
        var forcedSerial: UInt32
    }

    /// Reads a domain whole, with its forced keys: the two calls go out together, behind
    /// the subscription's, so the load costs one round trip.
    func load(_ domain: String) throws(PrefsdGSettingsError) -> Snapshot {
        let proxy = try proxy()
        let forcedAnswer = Mutex<Result<(value: [String], serial: UInt32), PreferencesProxyError>?>(nil)
        let forcedDone = DispatchGroup()
        forcedDone.enter()
        // Queued at once, ReadDomain right behind it: both go out together.
        proxy.answer(PreferencesCall.forcedKeys(domain), timeout: Self.loadTimeout) { result in
            forcedAnswer.withLock { $0 = result }
            forcedDone.leave()
        }
        let values: Result<(value: [String: PropertyListValue], serial: UInt32), PreferencesProxyError>
        do throws(PreferencesProxyError) {
            values = .success(try proxy.answerBlocking(PreferencesCall.readDomain(domain), timeout: Self.loadTimeout))
        } catch .notFound {
            // No such domain: nothing to stamp, so every signal counts as newer.
            values = .success(([:], 0))
        } catch {
            values = .failure(error)
        }
        forcedDone.wait()
        do throws(PreferencesProxyError) {
            let answer = try values.get()
            guard let forced = try forcedAnswer.withLock({ $0 })?.get() else {
                throw .unexpectedReply("ForcedKeys ended without an answer")
            }
            return Snapshot(values: answer.value, serial: answer.serial, forced: Set(forced.value), forcedSerial: forced.serial)
        } catch {
            throw .prefsd(error)
        }
    }

    /// Sets and removes keys of `domain` in one atomic `Apply`; returns the serial of
    /// prefsd's answer once the change is durable.
    func apply(_ domain: String, set: [String: PropertyListValue], remove: [String]) throws(PrefsdGSettingsError) -> UInt32 {
        let proxy = try proxy()
        do throws(PreferencesProxyError) {
            return try proxy.answerBlocking(PreferencesCall.apply(domain, set: set, remove: remove), timeout: Self.writeTimeout).serial
        } catch {
            throw .prefsd(error)
        }
    }

    /// Ends the subscriptions and closes the connection.
    func close() {
        let open = connection.withLock { connection -> PreferencesProxy? in
            defer { connection = .failed(.serviceUnavailable("the backend was finalized")) }
            if case .open(let proxy) = connection { return proxy }
            return nil
        }
        open?.close()
    }
}
