import DBus
import PreferencesModel
import PreferencesProtocol

/// The one way a client talks to prefsd: a typed member for every method, signal and
/// property of `io.github.prefsd.Preferences1`, signals as async sequences or callbacks
/// accepted only from the process that owns prefsd's bus name, and one error enum
/// (``PreferencesProxyError``) with the same rules for every client.
///
/// ```swift
/// let proxy = try PreferencesProxy.connect()          // the session bus
/// defer { proxy.close() }
/// try await proxy.write("com.example.Editor", "FontSize", .integer(14))
/// let size = try await proxy.read("com.example.Editor", "FontSize")
/// for await event in try await proxy.events(in: ["com.example.Editor"]) { print(event) }
/// ```
///
/// Calls let the bus start prefsd when it is not running (activation). The proxy takes
/// over its connection's signal and disconnect handlers; call ``close()`` when done.
public final class PreferencesProxy: Sendable {
    /// How long a call may take by default, activation of prefsd included.
    public static let defaultTimeout: Duration = .seconds(25)

    /// The connection the calls go over.
    public let connection: DBusConnection
    let router: SignalRouter

    /// A proxy over an open connection; it sets the connection's signal and disconnect handlers.
    public init(connection: DBusConnection) {
        self.connection = connection
        router = SignalRouter(connection: connection)
    }

    deinit {
        router.close()
    }

    /// A proxy on a new private connection to the bus at `address`, or to the session bus
    /// (`DBUS_SESSION_BUS_ADDRESS`) when `nil`.
    /// - Throws: ``PreferencesProxyError/serviceUnavailable(_:)`` when there is no bus or it
    ///   cannot be reached.
    public static func connect(address: String? = nil) throws(PreferencesProxyError) -> PreferencesProxy {
        do throws(DBusError) {
            if let address { return PreferencesProxy(connection: try DBusConnection.connect(address: address)) }
            return PreferencesProxy(connection: try DBusConnection.connectToSessionBus())
        } catch {
            throw PreferencesProxyError(error)
        }
    }

    /// Ends every subscription and closes the connection. Idempotent.
    public func close() {
        router.close()
        connection.close()
    }

    /// Sends `request` and reads its reply, without blocking a thread.
    public func perform<Reply>(_ request: PreferencesRequest<Reply>, timeout: Duration = defaultTimeout) async throws(PreferencesProxyError) -> Reply {
        try await Self.perform(request, on: connection, timeout: timeout)
    }

    /// Sends `request` and blocks the calling thread until its reply is read, for callers
    /// that cannot suspend. Never call it from a subscription's callback.
    public func performBlocking<Reply>(_ request: PreferencesRequest<Reply>, timeout: Duration = defaultTimeout) throws(PreferencesProxyError) -> Reply {
        try answerBlocking(request, timeout: timeout).value
    }

    /// Like ``performBlocking(_:timeout:)``, with the serial of prefsd's reply: a signal
    /// with a higher ``DomainChange/serial`` was sent after this answer.
    public func answerBlocking<Reply>(_ request: PreferencesRequest<Reply>, timeout: Duration = defaultTimeout) throws(PreferencesProxyError) -> (
        value: Reply, serial: UInt32
    ) {
        let reply: DBusMessage
        do {
            reply = try connection.callBlocking(request.message, timeout: timeout)
        } catch {
            throw PreferencesProxyError(error)
        }
        return (try request.reply(reply.body), reply.serial)
    }

    /// Like ``perform(_:timeout:completion:)``, with the serial of prefsd's reply (see
    /// ``answerBlocking(_:timeout:)``). The call is queued before this returns: calls made
    /// after it reach the bus after it.
    public func answer<Reply>(
        _ request: PreferencesRequest<Reply>, timeout: Duration = defaultTimeout,
        completion: @escaping @Sendable (Result<(value: Reply, serial: UInt32), PreferencesProxyError>) -> Void
    ) {
        Self.answer(request, on: connection, timeout: timeout, completion: completion)
    }

    /// Sends `request` without waiting; `completion` runs once with the reply read, on the
    /// connection's queue (it must not block).
    public func perform<Reply>(
        _ request: PreferencesRequest<Reply>, timeout: Duration = defaultTimeout,
        completion: @escaping @Sendable (Result<Reply, PreferencesProxyError>) -> Void
    ) {
        Self.perform(request, on: connection, timeout: timeout, completion: completion)
    }

    static func perform<Reply>(
        _ request: PreferencesRequest<Reply>, on connection: DBusConnection, timeout: Duration,
        completion: @escaping @Sendable (Result<Reply, PreferencesProxyError>) -> Void
    ) {
        answer(request, on: connection, timeout: timeout) { result in completion(result.map { $0.value }) }
    }

    static func answer<Reply>(
        _ request: PreferencesRequest<Reply>, on connection: DBusConnection, timeout: Duration,
        completion: @escaping @Sendable (Result<(value: Reply, serial: UInt32), PreferencesProxyError>) -> Void
    ) {
        connection.call(request.message, timeout: timeout) { result in
            completion(
                result.mapError(PreferencesProxyError.init).flatMap { reply in
                    Result { () throws(PreferencesProxyError) in (try request.reply(reply.body), reply.serial) }
                })
        }
    }

    static func perform<Reply>(_ request: PreferencesRequest<Reply>, on connection: DBusConnection, timeout: Duration) async throws(PreferencesProxyError)
        -> Reply
    {
        let reply: DBusMessage
        do {
            reply = try await connection.call(request.message, timeout: timeout)
        } catch {
            throw PreferencesProxyError(error)
        }
        return try request.reply(reply.body)
    }
}
