import DBus
import Dispatch
import Logging
import Synchronization

/// Tells who is behind each sender before its calls run, without ever blocking the
/// connection's queue.
///
/// The first call of a new unique name is held while the bus is asked, with an async
/// `GetConnectionUnixProcessID`, which process it is, and that process's root is read for
/// `/.flatpak-info` (off the queue). Later calls of the same name wait behind it, in
/// order; calls of other names go on. The answer is kept per unique name (the bus never
/// reuses one) until ``forget(_:)`` is called when the name leaves the bus.
final class CallerGate: Sendable {
    /// A call waiting for its sender to be known, and what runs it then.
    private struct Held: Sendable {
        let call: DBusMessage
        let run: @Sendable (DBusMessage, CallerIdentity) -> Void
    }

    private struct State: Sendable {
        var known: [String: CallerIdentity] = [:]
        /// The calls of senders being identified, in arrival order.
        var held: [String: [Held]] = [:]
        /// Senders that left the bus while being identified: their answer is not kept.
        var gone: Set<String> = []
    }

    private let connection: DBusConnection
    private let logger: Logger
    private let procRoot: String
    private let state = Mutex(State())
    private let reading = DispatchQueue(label: "prefsd.caller-identity")

    /// A gate asking the bus of `connection`; `procRoot` is where process roots are read.
    init(connection: DBusConnection, logger: Logger, procRoot: String = "/proc") {
        self.connection = connection
        self.logger = logger
        self.procRoot = procRoot
    }

    /// Runs `run` with `call` and its sender's identity: at once when the sender is known,
    /// else once it is, after the sender's earlier calls.
    func admit(_ call: DBusMessage, then run: @escaping @Sendable (DBusMessage, CallerIdentity) -> Void) {
        guard let sender = call.sender else {
            return run(call, .unidentified("the call has no sender"))
        }
        enum Decision { case now(CallerIdentity), wait, identify }
        let decision = state.withLock { state -> Decision in
            if let identity = state.known[sender] { return .now(identity) }
            let first = state.held[sender] == nil
            state.held[sender, default: []].append(Held(call: call, run: run))
            return first ? .identify : .wait
        }
        switch decision {
        case .now(let identity): run(call, identity)
        case .wait: break
        case .identify: identify(sender)
        }
    }

    /// Drops what is known of `name`, which has left the bus.
    func forget(_ name: String) {
        state.withLock { state in
            state.known[name] = nil
            if state.held[name] != nil { state.gone.insert(name) }
        }
    }

    private func identify(_ sender: String) {
        let question = DBusMessage.methodCall(
            destination: "org.freedesktop.DBus", path: "/org/freedesktop/DBus", interface: "org.freedesktop.DBus",
            member: "GetConnectionUnixProcessID", body: [.string(sender)])
        connection.call(question, timeout: .seconds(10)) { [self] reply in
            switch reply {
            case .success(let message):
                guard case .uint32(let pid)? = message.body.first else {
                    return release(sender, .unidentified("the bus answered GetConnectionUnixProcessID with (\(message.signature))"))
                }
                // Reading a file is I/O: never on the connection's queue.
                reading.async { [self] in
                    let identity = CallerIdentity.of(processID: pid, procRoot: procRoot)
                    logger.debug("caller identified", metadata: ["sender": "\(sender)", "pid": "\(pid)", "identity": "\(identity)"])
                    release(sender, identity)
                }
            case .failure(let error):
                release(sender, .unidentified("the bus could not say which process \(sender) is: \(error)"))
            }
        }
    }

    /// Runs the held calls of `sender`, in order, until none is left; only then is the
    /// identity kept, so a call arriving meanwhile never overtakes a held one.
    private func release(_ sender: String, _ identity: CallerIdentity) {
        while true {
            let batch = state.withLock { state -> [Held] in
                let batch = state.held[sender] ?? []
                if batch.isEmpty {
                    state.held[sender] = nil
                    if state.gone.remove(sender) == nil { state.known[sender] = identity }
                } else {
                    state.held[sender] = []
                }
                return batch
            }
            if batch.isEmpty { return }
            for held in batch { held.run(held.call, identity) }
        }
    }
}
