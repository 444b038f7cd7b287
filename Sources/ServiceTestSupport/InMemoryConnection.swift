import DBus
import Dispatch
import Foundation
import PreferencesService
import StandardExtras
import Synchronization

/// A ``ServiceConnection`` with no bus behind it: a test delivers method calls to the
/// object registered on it and reads the replies and signals the service sends, in the
/// order it sent them.
///
/// It keeps the rules of a bus connection that the service relies on: handlers and the
/// bus driver's answers run on one serial queue (the connection's), a message is encoded
/// by libdbus before it counts as sent (so a message the bus would refuse is refused
/// here too), and an encoded message is sent once. The bus driver answers
/// `GetConnectionUnixProcessID` with this process's own ID unless a test sets another
/// answer (``answerProcessID(of:with:)``): callers are then the host's, as the test is.
public final class InMemoryConnection: ServiceConnection {
    /// The sender a call gets when it names none.
    public static let defaultSender = ":1.100"

    /// The unique name the service's replies come from.
    public let uniqueName: String

    private struct State: Sendable {
        var handlers: [String: @Sendable (DBusMessage) -> Void] = [:]
        var quickAnswers: [String: @Sendable (borrowing IncomingCall) -> ReplyBody?] = [:]
        /// How many calls a quick answer answered.
        var quicklyAnswered = 0
        var maximumMessageSize: Int?
        /// Every message the service sent, in order.
        var sent: [DBusMessage] = []
        /// The encoded messages sent, held so that none is sent twice.
        var sentEncoded: [EncodedMessage] = []
        var nextSerial: UInt32 = 1
        /// The calls of ``call(_:timeout:)`` waiting for their reply, by serial.
        var waiting: [UInt32: CheckedContinuation<DBusMessage?, Never>] = [:]
        var processIDs: [String: Result<UInt32, DBusError>] = [:]
        var processIDQueries: [String] = []
    }

    private let state = Mutex(State())
    /// The connection's queue: handlers and the bus driver's answers run here.
    private let queue = DispatchQueue(label: "InMemoryConnection")

    /// A connection standing for the unique name `uniqueName`.
    public init(uniqueName: String = ":1.1") {
        self.uniqueName = uniqueName
    }

    // MARK: The service's side

    /// Keeps `bytes` (``maximumMessageSize``); nothing here is large enough to refuse.
    public func setMaximumMessageSize(_ bytes: Int) {
        state.withLock { $0.maximumMessageSize = bytes }
    }

    /// Registers `handler` for calls to `path`; a path registered already throws
    /// `org.freedesktop.DBus.Error.ObjectPathInUse`, as libdbus does.
    public func registerObject(path: String, handler: @escaping @Sendable (DBusMessage) -> Void) throws(DBusError) {
        try register(path: path, quickAnswer: nil, handler: handler)
    }

    /// Registers `handler` for calls to `path`, each call that waits for a reply offered
    /// first to `quickAnswer`, as a bus connection does.
    public func registerObject(
        path: String, quickAnswer: @escaping @Sendable (borrowing IncomingCall) -> ReplyBody?,
        handler: @escaping @Sendable (DBusMessage) -> Void
    ) throws(DBusError) {
        try register(path: path, quickAnswer: quickAnswer, handler: handler)
    }

    private func register(
        path: String, quickAnswer: (@Sendable (borrowing IncomingCall) -> ReplyBody?)?,
        handler: @escaping @Sendable (DBusMessage) -> Void
    ) throws(DBusError) {
        let registered = state.withLock { state -> Bool in
            guard state.handlers[path] == nil else { return false }
            state.handlers[path] = handler
            state.quickAnswers[path] = quickAnswer
            return true
        }
        guard registered else {
            throw .remote(name: "org.freedesktop.DBus.Error.ObjectPathInUse", message: "an object is registered at \(path) already")
        }
    }

    /// Encodes `message` (libdbus's checks) and records it as sent; a reply goes to the
    /// ``call(_:timeout:)`` waiting for it.
    public func send(_ message: DBusMessage) throws(DBusError) {
        _ = try EncodedMessage(encoding: message)
        record(message)
    }

    /// Encodes `message` as a bus connection does.
    public func encode(_ message: DBusMessage) throws(DBusError) -> EncodedMessage {
        try EncodedMessage(encoding: message)
    }

    /// Records the message `encoded` was made from as sent; one sent already throws
    /// ``DBusError/invalidMessage(_:)``, as on a bus connection.
    public func send(_ encoded: EncodedMessage) throws(DBusError) {
        let first = state.withLock { state -> Bool in
            guard !state.sentEncoded.contains(where: { $0 === encoded }) else { return false }
            state.sentEncoded.append(encoded)
            return true
        }
        guard first else {
            throw .invalidMessage("this encoded message was sent already; encode the message again to send it again")
        }
        record(encoded.message)
    }

    /// Answers with what ``answerProcessID(of:with:)`` set for `name`, else this process's
    /// ID, on the connection's queue.
    public func getConnectionUnixProcessID(
        _ name: String, timeout: Duration, completion: @escaping @Sendable (Result<UInt32, DBusError>) -> Void
    ) {
        let answer = state.withLock { state in
            state.processIDQueries.append(name)
            return state.processIDs[name]
        }
        queue.async { completion(answer ?? .success(UInt32(ProcessInfo.processInfo.processIdentifier))) }
    }

    /// Nothing to write: a message counts as sent once ``send(_:)-(DBusMessage)`` returns.
    public func flush() {}

    private func record(_ message: DBusMessage) {
        let waiter = state.withLock { state -> CheckedContinuation<DBusMessage?, Never>? in
            state.sent.append(message)
            guard message.kind == .methodReturn || message.kind == .error, let serial = message.replySerial else { return nil }
            return state.waiting.removeValue(forKey: serial)
        }
        waiter?.resume(returning: message)
    }

    // MARK: The test's side

    /// Sets what the bus driver answers when asked which process `sender` is: a process
    /// ID, or an error (`org.freedesktop.DBus.Error.NameHasNoOwner` for a sender that left).
    public func answerProcessID(of sender: String, with answer: Result<UInt32, DBusError>) {
        state.withLock { $0.processIDs[sender] = answer }
    }

    /// The senders the bus driver was asked about, in order.
    public var processIDQueries: [String] { state.withLock { $0.processIDQueries } }

    /// The largest incoming message the service asked for, once it did.
    public var maximumMessageSize: Int? { state.withLock { $0.maximumMessageSize } }

    /// Every message the service sent, in order.
    public var sent: [DBusMessage] { state.withLock { $0.sent } }

    /// How many calls were answered by a quick answer, before the handler.
    public var quicklyAnswered: Int { state.withLock { $0.quicklyAnswered } }

    /// The signals the service sent, in order.
    public var signals: [DBusMessage] { sent.filter { $0.kind == .signal } }

    /// Waits until the service sent at least `count` signals, or `timeout` passed; returns
    /// the signals sent by then.
    public func signals(count: Int, timeout: Duration = .seconds(10)) async -> [DBusMessage] {
        let deadline = ContinuousClock.now + timeout
        while signals.count < count, ContinuousClock.now < deadline {
            try? await Task.sleep(for: .milliseconds(2))
        }
        return signals
    }

    /// `message` as the bus would deliver it: a serial of its own, the sender
    /// ``defaultSender`` and this connection as destination unless it names others.
    public func stamped(_ message: DBusMessage) -> DBusMessage {
        var call = message
        call.serial = state.withLock { state in
            defer { state.nextSerial += 1 }
            return state.nextSerial
        }
        if call.sender == nil { call.sender = Self.defaultSender }
        if call.destination == nil { call.destination = uniqueName }
        return call
    }

    /// Delivers `call` (stamped, see ``stamped(_:)``) to the object registered at its path,
    /// on the connection's queue, without waiting for an answer; returns the call as
    /// delivered. A call to a path with no object is answered
    /// `org.freedesktop.DBus.Error.UnknownObject`.
    @discardableResult
    public func deliver(_ message: DBusMessage) -> DBusMessage {
        let call = stamped(message)
        dispatch(call)
        return call
    }

    /// Runs the handler of `call`'s path with it on the connection's queue, after offering
    /// it to the path's quick answer when it waits for a reply.
    private func dispatch(_ call: DBusMessage) {
        queue.async { [self] in
            let (handler, quickAnswer) = state.withLock { ($0.handlers[call.path ?? ""], $0.quickAnswers[call.path ?? ""]) }
            guard let handler else {
                if !call.noReplyExpected {
                    record(call.makeError(name: "org.freedesktop.DBus.Error.UnknownObject", message: "no object at \(call.path ?? "")"))
                }
                return
            }
            if !call.noReplyExpected, let quickAnswer, let body = quickAnswer(IncomingCall(call)) {
                let reply = call.makeReturn(body)
                // Counted before it is recorded: a test waiting for the reply then sees it counted.
                if (try? EncodedMessage(encoding: reply)) != nil {
                    state.withLock { $0.quicklyAnswered += 1 }
                    record(reply)
                    return
                }
            }
            handler(call)
        }
    }

    /// Delivers `message` and waits for its reply, as `DBusConnection.call` does: an
    /// error reply throws ``DBusError/remote(name:message:)``, no reply within `timeout`
    /// throws `org.freedesktop.DBus.Error.NoReply`, a call libdbus would refuse throws
    /// ``DBusError/invalidMessage(_:)`` and is not delivered.
    public func call(_ message: DBusMessage, timeout: Duration = .seconds(25)) async throws(DBusError) -> DBusMessage {
        _ = try EncodedMessage(encoding: message)
        let call = stamped(message)
        let reply = await withCheckedContinuation { (continuation: CheckedContinuation<DBusMessage?, Never>) in
            state.withLock { $0.waiting[call.serial] = continuation }
            dispatch(call)
            queue.asyncAfter(deadline: .now() + timeout.dispatchInterval) { [self] in
                state.withLock { $0.waiting.removeValue(forKey: call.serial) }?.resume(returning: nil)
            }
        }
        guard let reply else {
            throw .remote(name: "org.freedesktop.DBus.Error.NoReply", message: "no reply to \(call.member ?? "the call") within \(timeout)")
        }
        if reply.kind == .error {
            throw .remote(name: reply.errorName ?? "", message: reply.errorMessage ?? "")
        }
        return reply
    }
}
