import DBus

/// What the service needs of the connection it serves on: its object registered, its
/// replies and signals sent, and the bus driver asked which process a sender is.
///
/// ``PreferencesService`` and its ``CallerGate`` hold their connection as this protocol:
/// a `DBusConnection` in prefsd, an in-memory connection in tests that send calls and read
/// the answers and signals with no bus (`ServiceTestSupport`'s `InMemoryConnection`).
public protocol ServiceConnection: Sendable {
    /// The unique name the bus gave the connection (like `:1.42`).
    var uniqueName: String { get }

    /// Sets the largest incoming message the connection accepts.
    func setMaximumMessageSize(_ bytes: Int)

    /// Registers `handler` for every method call to exactly `path`. It runs on the
    /// connection's queue, one call at a time, and must not block; it answers with
    /// ``send(_:)-(DBusMessage)``, at once or later, from any thread.
    func registerObject(path: String, handler: @escaping @Sendable (DBusMessage) -> Void) throws(DBusError)

    /// Registers `handler` for every method call to exactly `path`, each call that waits for
    /// a reply offered first to `quickAnswer`, before it is decoded: a body it returns is
    /// the reply, and the call goes no further (see `DBusConnection`'s).
    func registerObject(
        path: String, quickAnswer: @escaping @Sendable (borrowing IncomingCall) -> ReplyBody?,
        handler: @escaping @Sendable (DBusMessage) -> Void
    ) throws(DBusError)

    /// Sends `message` (a reply, an error or a signal) without waiting for the peer;
    /// messages sent from one thread go out in order.
    func send(_ message: DBusMessage) throws(DBusError)

    /// Sends the reply `call.makeReturn(body)` would make (nothing when the caller wants no
    /// reply), without making that message first where the connection can (by default it
    /// sends that message).
    func reply(to call: DBusMessage, with body: ReplyBody) throws(DBusError)

    /// Encodes `message` ahead of sending it with ``send(_:)-(EncodedMessage)``, with the
    /// checks of ``send(_:)-(DBusMessage)``.
    func encode(_ message: DBusMessage) throws(DBusError) -> EncodedMessage

    /// Sends a message encoded by ``encode(_:)``; throws for one sent already.
    func send(_ encoded: EncodedMessage) throws(DBusError)

    /// Asks the bus driver for the process ID of the connection owning `name`
    /// (`GetConnectionUnixProcessID`); `completion` runs once, on the connection's queue.
    func getConnectionUnixProcessID(
        _ name: String, timeout: Duration, completion: @escaping @Sendable (Result<UInt32, DBusError>) -> Void)

    /// Blocks until every message sent so far is written.
    func flush()
}

extension ServiceConnection {
    /// Sends `call.makeReturn(body)`, unless the caller wants no reply.
    public func reply(to call: DBusMessage, with body: ReplyBody) throws(DBusError) {
        guard !call.noReplyExpected else { return }
        try send(call.makeReturn(body))
    }
}

/// prefsd serves on a bus connection.
extension DBusConnection: ServiceConnection {}
