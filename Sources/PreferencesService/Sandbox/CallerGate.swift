import DBus
import Dispatch
import Foundation
import Logging
import StandardExtras
import Synchronization

/// Tells who is behind each sender before its calls run, without ever blocking the
/// connection's queue, and without letting one sender hold up another's identification.
///
/// The first call of a new unique name is held while the bus is asked, with an async
/// `GetConnectionUnixProcessID`, which process it is; that process's root is then read for
/// `/.flatpak-info` on a thread of a pool (``ProcessRootReaders``), for at most
/// ``Bounds/readTimeout`` (past it the sender is unidentified, and the thread is left to
/// finish alone). Later calls of the same name wait behind the first, in order, at most
/// ``Bounds/heldCalls`` calls and ``Bounds/heldBytes`` bytes of them (more are refused);
/// calls of other names go on. The answer is kept per
/// unique name (the bus never reuses one); when the name leaves the bus (``forget(_:)``),
/// the answer is still kept for the newest ``Bounds/departedKept`` names that left, so a
/// call that was already on its way is judged by who its sender was.
///
/// Identification can start before the first call: ``prepare(_:)`` starts it when a new
/// name appears on the bus, so a sender that sends one call and leaves at once is known
/// all the same. A sender that left before it could be identified is judged by where its
/// call came in (`trustsDeparted`): see ``Identification/departed(_:)``.
final class CallerGate: Sendable {
    /// How much the gate holds and how long it waits.
    struct Bounds: Sendable {
        /// Most calls of one sender held while it is identified (the first included).
        var heldCalls: Int
        /// Most bytes (as marshalled) of the calls of one sender held while it is identified;
        /// the first call is held whatever its size.
        var heldBytes: Int
        /// Longest wait for one process root to be read.
        var readTimeout: Duration = .seconds(5)
        /// Most threads reading process roots at once; past it reads wait their turn (each
        /// sender still given up on after ``readTimeout``).
        var readsInFlight: Int = 64
        /// Most names that left the bus whose answer is kept for the calls they sent before
        /// leaving; past it the oldest is forgotten (a call of it then finds its sender gone).
        var departedKept: Int = 1_024

        /// The bounds of `limits`, with the default wait and reads.
        init(_ limits: ServiceLimits) {
            heldCalls = limits.heldCallsPerSender
            heldBytes = limits.heldBytesPerSender
        }

        /// Bounds given one by one.
        init(heldCalls: Int, heldBytes: Int, readTimeout: Duration = .seconds(5), readsInFlight: Int = 64) {
            self.heldCalls = heldCalls
            self.heldBytes = heldBytes
            self.readTimeout = readTimeout
            self.readsInFlight = readsInFlight
        }
    }

    /// A call waiting for its sender to be known, and what runs it then.
    private struct Held: Sendable {
        let call: DBusMessage
        let run: @Sendable (DBusMessage, CallerIdentity) -> Void
    }

    /// The calls of one sender being identified, in arrival order, and their size.
    private struct Waiting: Sendable {
        var calls: [Held] = []
        var bytes = 0
    }

    private struct State: Sendable {
        var known: [String: Identification] = [:]
        /// The program each host sender runs, for the change journal's `who`.
        var programs: [String: String] = [:]
        /// The process each sender is, as the bus told it.
        var processIDs: [String: UInt32] = [:]
        /// The calls of senders being identified.
        var held: [String: Waiting] = [:]
        /// Senders whose identification is under way: the first answer (the read, or its
        /// time-out) releases their calls, a later one is dropped.
        var identifying: Set<String> = []
        /// Senders that left the bus while being identified: their answer joins `departed`.
        var gone: Set<String> = []
        /// Names that left the bus whose answer is still kept, oldest first.
        var departed: [String] = []

        /// Keeps what is known of `name`, which has left the bus, among the newest `limit`
        /// such names; what is known of older ones goes.
        mutating func keepDeparted(_ name: String, limit: Int) {
            departed.append(name)
            // Trimmed in one go once twice the limit: each name is moved once on average.
            guard departed.count > 2 * max(limit, 1) else { return }
            for old in departed.prefix(departed.count - limit) {
                known[old] = nil
                programs[old] = nil
                processIDs[old] = nil
            }
            departed.removeFirst(departed.count - limit)
        }
    }

    private let connection: any ServiceConnection
    private let logger: Logger
    private let bounds: Bounds
    private let state = Mutex(State())
    private let reader: @Sendable (UInt32) -> Identification
    private let readers: ProcessRootReaders
    private let trustsDeparted: @Sendable (DBusMessage) -> Bool

    /// A gate asking the bus driver of `connection`; `procRoot` is where process roots are read
    /// (`reader`, when given, replaces the read: for tests). `trustsDeparted` says whether a
    /// call whose sender left before it could be identified runs as the host's.
    init(
        connection: any ServiceConnection, logger: Logger, procRoot: String = "/proc", bounds: Bounds,
        trustsDeparted: @escaping @Sendable (DBusMessage) -> Bool = { _ in false },
        reader: (@Sendable (UInt32) -> Identification)? = nil
    ) {
        self.connection = connection
        self.logger = logger
        self.bounds = bounds
        readers = ProcessRootReaders(limit: bounds.readsInFlight)
        self.trustsDeparted = trustsDeparted
        self.reader = reader ?? { pid in CallerIdentity.of(processID: pid, procRoot: procRoot) }
    }

    /// Whether `sender` is known to be a process of the host, which may make every call.
    func isHost(_ sender: String) -> Bool {
        state.withLock { $0.known[sender] } == .identified(.host)
    }

    /// Runs `run` with `call` and its sender's identity: at once when the sender is known,
    /// else once it is, after the sender's earlier calls. Returns why the call is refused
    /// instead (too many of the sender's calls held already): it is then not run, and the
    /// caller answers it `org.freedesktop.DBus.Error.LimitsExceeded`.
    func admit(_ call: DBusMessage, then run: @escaping @Sendable (DBusMessage, CallerIdentity) -> Void) -> String? {
        guard let sender = call.sender else {
            run(call, .unidentified("the call has no sender"))
            return nil
        }
        if let known = state.withLock({ $0.known[sender] }) {
            run(call, identity(known, for: call))
            return nil
        }
        // Measured outside the lock: it walks the whole body.
        let bytes = DBusValue.structure(call.body).marshalledSize
        // Held without the libdbus message it came as: libdbus stops reading once the
        // messages it delivered and are still alive pass its limit, and the answer the
        // held calls wait for must be read (see `DBusMessage.detached()`).
        let call = call.detached()
        enum Decision {
            case now(Identification)
            case wait, identify
            case refuse(String)
        }
        let decision = state.withLock { state -> Decision in
            if let known = state.known[sender] { return .now(known) }
            guard var waiting = state.held[sender] else {
                state.held[sender] = Waiting(calls: [Held(call: call, run: run)], bytes: bytes)
                state.identifying.insert(sender)
                return .identify
            }
            if waiting.calls.count >= bounds.heldCalls || (!waiting.calls.isEmpty && waiting.bytes + bytes > bounds.heldBytes) {
                return .refuse(
                    "prefsd holds at most \(bounds.heldCalls) calls (\(bounds.heldBytes) bytes) of one client while it learns who the client is, and \(sender) sent \(waiting.calls.count) calls (\(waiting.bytes) bytes) before that; wait for the answers before sending more (prefsd --max-held-calls, --max-held-size)"
                )
            }
            waiting.calls.append(Held(call: call, run: run))
            waiting.bytes += bytes
            state.held[sender] = waiting
            return .wait
        }
        switch decision {
        case .now(let known): run(call, identity(known, for: call))
        case .wait: break
        case .identify: identify(sender)
        case .refuse(let reason):
            logger.warning("a call of a client being identified was refused", metadata: ["sender": "\(sender)", "member": "\(call.member ?? "")"])
            return reason
        }
        return nil
    }

    /// Starts identifying `sender`, a name that has just appeared on the bus, unless that is
    /// under way or done: its first call then finds it known, or its identification under way.
    func prepare(_ sender: String) {
        let start = state.withLock { state -> Bool in
            guard state.known[sender] == nil, state.held[sender] == nil else { return false }
            state.held[sender] = Waiting()
            state.identifying.insert(sender)
            return true
        }
        if start { identify(sender) }
    }

    /// Notes that `name` has left the bus: what is known of it is kept for the calls it sent
    /// before leaving, among the newest ``Bounds/departedKept`` names that left.
    func forget(_ name: String) {
        state.withLock { state in
            if state.held[name] != nil {
                state.gone.insert(name)
            } else if state.known[name] != nil {
                state.keepDeparted(name, limit: bounds.departedKept)
            }
        }
    }

    /// Who made a change `call` asks for, as the change journal records it: the
    /// application ID of a sandboxed caller, else the name of the program the sender runs
    /// (`unknown` when prefsd could not read it).
    func who(_ call: DBusMessage, as caller: CallerIdentity) -> String {
        if case .application(let id) = caller { return id }
        guard let sender = call.sender else { return "unknown" }
        return state.withLock { $0.programs[sender] } ?? "unknown"
    }

    /// The process `sender` is, as the bus told it when prefsd identified it; `nil` when
    /// the bus did not say or the sender left.
    func processID(of sender: String) -> UInt32? {
        state.withLock { $0.processIDs[sender] }
    }

    /// The identity `call` runs with, its sender being `known`.
    private func identity(_ known: Identification, for call: DBusMessage) -> CallerIdentity {
        switch known {
        case .identified(let identity): identity
        case .departed:
            trustsDeparted(call)
                ? .host
                : .unidentified(
                    "\(call.sender ?? "the sender") left the bus before prefsd could tell who it was, and calls at \(call.destination ?? "this name") are answered only for callers prefsd has identified; wait for the answer of a call before leaving"
                )
        }
    }

    private func identify(_ sender: String) {
        connection.getConnectionUnixProcessID(sender, timeout: .seconds(10)) { [self] reply in
            switch reply {
            case .success(let pid):
                state.withLock { state in
                    if state.identifying.contains(sender) { state.processIDs[sender] = pid }
                }
                read(sender, pid)
            case .failure(let error) where error.isRemote(named: StandardErrorName.nameHasNoOwner):
                // The bus forgot the name: the sender left.
                finish(sender, .departed("the bus no longer knows \(sender)"))
            case .failure(let error):
                finish(sender, .identified(.unidentified("the bus could not say which process \(sender) is: \(error)")))
            }
        }
    }

    /// Reads the root of process `pid` for `sender` on a thread of the pool (it may block on
    /// a file system that does not answer), and gives up on it after the time-out.
    private func read(_ sender: String, _ pid: UInt32) {
        let reader = reader
        readers.run { [self] in
            let identification = reader(pid)
            if case .identified(.host) = identification, let program = ProgramName.of(processID: pid) {
                // Kept before `finish` lets the sender's calls run.
                state.withLock { state in
                    if state.identifying.contains(sender) { state.programs[sender] = program }
                }
            }
            logger.debug("caller identified", metadata: ["sender": "\(sender)", "pid": "\(pid)", "identity": "\(identification)"])
            finish(sender, identification)
        }
        let timeout = bounds.readTimeout
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout.dispatchInterval) { [self] in
            finish(
                sender,
                .identified(
                    .unidentified(
                        "reading the root of its process \(pid) took longer than \(timeout) (a file system that does not answer?)")))
        }
    }

    /// Gives `sender` its answer, unless it has one already (the read and its time-out race).
    private func finish(_ sender: String, _ identification: Identification) {
        guard state.withLock({ $0.identifying.remove(sender) != nil }) else { return }
        switch identification {
        case .identified(.unidentified(let reason)):
            logger.info("a caller could not be identified", metadata: ["sender": "\(sender)", "reason": "\(reason)"])
        case .departed(let reason):
            logger.info("a caller left before it was identified", metadata: ["sender": "\(sender)", "reason": "\(reason)"])
        case .identified: break
        }
        release(sender, identification)
    }

    /// Runs the held calls of `sender`, in order, until none is left; only then is the
    /// answer kept, so a call arriving meanwhile never overtakes a held one.
    private func release(_ sender: String, _ identification: Identification) {
        while true {
            let batch = state.withLock { state -> [Held] in
                let batch = state.held[sender]?.calls ?? []
                if batch.isEmpty {
                    state.held[sender] = nil
                    state.known[sender] = identification
                    // A sender that left (or was found gone) is kept among the departed only.
                    if state.gone.remove(sender) != nil || identification.isDeparture {
                        state.keepDeparted(sender, limit: bounds.departedKept)
                    }
                } else {
                    state.held[sender] = Waiting()
                }
                return batch
            }
            if batch.isEmpty { return }
            for held in batch { held.run(held.call, identity(identification, for: held.call)) }
        }
    }
}
