import Dispatch
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The process's one inotify instance, shared by every ``InotifyPathWatch``: a user has 128
/// instances on most systems, shared by every program of the session, and a watcher that
/// takes one of its own would run out of them where many services run in one process.
///
/// Watches are counted by subscriber: two subscribers watching one directory share the
/// kernel's watch (inotify gives both the same watch descriptor, and each adds its events
/// to the watch's mask), and the watch is removed when the last lets go. Adding and removing
/// run one at a time on a queue of their own, so that a watch one subscriber removes is
/// never one another has just been given. Events are read on another queue and handed to
/// each subscriber on its own queue.
final class InotifyInstance: Sendable {
    /// One event, as inotify reported it.
    struct Event: Sendable {
        /// The watch descriptor, or -1 when events were lost (`IN_Q_OVERFLOW`).
        let watch: Int32
        /// What happened (`IN_CREATE`, `IN_DELETE_SELF`…).
        let mask: UInt32
        /// The entry of the watched directory it concerns, or "" for the directory itself.
        let name: String
    }

    /// The shared instance, made on first use, or why inotify cannot be had.
    static let shared: Result<InotifyInstance, InotifyWatchFailure> = {
        let descriptor = inotify_init1(Int32(IN_NONBLOCK | IN_CLOEXEC))
        guard descriptor >= 0 else { return .failure(InotifyWatchFailure("inotify is unavailable: \(String(cString: strerror(errno)))")) }
        return .success(InotifyInstance(descriptor: descriptor))
    }()

    private let descriptor: Int32
    /// Adds and removes watches, one at a time.
    private let control = DispatchQueue(label: "prefsd.inotify-watches")
    private let state = Mutex(Subscriptions())
    // DispatchSources are safe to use from any thread; Dispatch does not mark them Sendable.
    nonisolated(unsafe) private let reader: any DispatchSourceRead

    /// Who watches what.
    private struct Subscriptions {
        /// Each watch descriptor's subscribers.
        var watchers: [Int32: Set<ObjectIdentifier>] = [:]
        /// Each subscriber's queue and event handler.
        var subscribers: [ObjectIdentifier: Subscriber] = [:]
    }

    /// Where a subscriber's events go.
    private struct Subscriber {
        let queue: DispatchQueue
        let deliver: @Sendable ([Event]) -> Void
    }

    private init(descriptor: Int32) {
        self.descriptor = descriptor
        reader = DispatchSource.makeReadSource(fileDescriptor: descriptor, queue: DispatchQueue(label: "prefsd.inotify-events"))
        reader.setEventHandler { [unowned self] in readEvents() }
        reader.resume()
    }

    /// Hands `subscriber`'s events to `deliver`, on `queue`.
    func subscribe(_ subscriber: ObjectIdentifier, queue: DispatchQueue, deliver: @escaping @Sendable ([Event]) -> Void) {
        state.withLock { $0.subscribers[subscriber] = Subscriber(queue: queue, deliver: deliver) }
    }

    /// Ends `subscriber`'s watches and events.
    func unsubscribe(_ subscriber: ObjectIdentifier) {
        control.sync {
            let emptied = state.withLock { state -> [Int32] in
                state.subscribers[subscriber] = nil
                var emptied: [Int32] = []
                for (watch, subscribers) in state.watchers where subscribers.contains(subscriber) {
                    state.watchers[watch]?.remove(subscriber)
                    if state.watchers[watch]?.isEmpty == true {
                        state.watchers[watch] = nil
                        emptied.append(watch)
                    }
                }
                return emptied
            }
            for watch in emptied { inotify_rm_watch(descriptor, watch) }
        }
    }

    /// Watches the directory at `path` for `mask` on behalf of `subscriber`; its watch
    /// descriptor, or the `errno` of the failure.
    func addWatch(_ path: String, mask: UInt32, for subscriber: ObjectIdentifier) -> Result<Int32, Errno> {
        control.sync {
            let watch = inotify_add_watch(descriptor, path, mask | UInt32(IN_MASK_ADD))
            guard watch >= 0 else { return .failure(Errno(errno)) }
            state.withLock { _ = $0.watchers[watch, default: []].insert(subscriber) }
            return .success(watch)
        }
    }

    /// Ends `subscriber`'s share of `watch`; the watch goes with its last subscriber.
    func removeWatch(_ watch: Int32, for subscriber: ObjectIdentifier) {
        control.sync {
            let emptied = state.withLock { state -> Bool in
                state.watchers[watch]?.remove(subscriber)
                guard state.watchers[watch]?.isEmpty == true else { return false }
                state.watchers[watch] = nil
                return true
            }
            if emptied { inotify_rm_watch(descriptor, watch) }
        }
    }

    /// An `errno` value.
    struct Errno: Error {
        let code: Int32
        init(_ code: Int32) { self.code = code }
    }

    /// Reads every pending event and hands each subscriber its own: those of its watches,
    /// and every subscriber a lost-events one.
    private func readEvents() {
        var events: [Event] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let count = read(descriptor, &buffer, buffer.count)
            guard count > 0 else { break }
            buffer.withUnsafeBytes { bytes in
                var offset = 0
                while offset + 16 <= count {
                    let watch = bytes.loadUnaligned(fromByteOffset: offset, as: Int32.self)
                    let mask = bytes.loadUnaligned(fromByteOffset: offset + 4, as: UInt32.self)
                    let length = Int(bytes.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self))
                    let name = bytes[(offset + 16)..<min(offset + 16 + length, count)].prefix(while: { $0 != 0 })
                    events.append(Event(watch: mask & UInt32(IN_Q_OVERFLOW) != 0 ? -1 : watch, mask: mask, name: String(decoding: name, as: UTF8.self)))
                    offset += 16 + length
                }
            }
        }
        let deliveries = state.withLock { state -> [(Subscriber, [Event])] in
            var bySubscriber: [ObjectIdentifier: [Event]] = [:]
            for event in events {
                let subscribers = event.watch == -1 ? Set(state.subscribers.keys) : state.watchers[event.watch] ?? []
                for subscriber in subscribers { bySubscriber[subscriber, default: []].append(event) }
                // The kernel ended this watch (its directory is gone, or it was removed).
                if event.mask & UInt32(IN_IGNORED) != 0 { state.watchers[event.watch] = nil }
            }
            return bySubscriber.compactMap { id, events in state.subscribers[id].map { ($0, events) } }
        }
        for (subscriber, events) in deliveries {
            subscriber.queue.async { subscriber.deliver(events) }
        }
    }
}
