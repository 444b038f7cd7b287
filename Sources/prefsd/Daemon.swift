import DBus
import Dispatch
import Foundation
import Logging
import PreferencesProtocol
import PreferencesService
import PreferencesStore
import Synchronization

/// Why prefsd could not start, with the exit status it ends with.
enum StartupError: Error, CustomStringConvertible {
    case bus(DBusError)
    case nameTaken
    case store(StoreError)

    var description: String {
        switch self {
        case .bus(.noSessionBus):
            "there is no session bus: DBUS_SESSION_BUS_ADDRESS is not set. Run prefsd inside a desktop session, under `dbus-run-session -- prefsd`, or give a bus with --address"
        case .bus(let error):
            "cannot use the bus: \(error)"
        case .nameTaken:
            "another prefsd already owns \(PreferencesBus.busName) on this bus; use it, or start this one with --replace to take over"
        case .store(let error):
            "cannot open the store: \(error)"
        }
    }

    var exitCode: Int32 {
        switch self {
        case .bus: 69        // EX_UNAVAILABLE
        case .nameTaken: 75  // EX_TEMPFAIL: one is running already
        case .store: 74      // EX_IOERR
        }
    }
}

/// Why a running prefsd stops.
enum ShutdownReason: Sendable, CustomStringConvertible {
    case signal(Int32)
    case busGone
    case replaced

    var description: String {
        switch self {
        case .signal(let number): number == SIGTERM ? "SIGTERM" : number == SIGINT ? "SIGINT" : "signal \(number)"
        case .busGone: "the bus connection was lost"
        case .replaced: "another prefsd took over the bus name (--replace)"
        }
    }
}

/// A running prefsd: the connection, the service and the store, and what ends them.
final class Daemon: Sendable {
    private let connection: DBusConnection
    private let service: PreferencesService
    private let lock: StoreLock
    private let shutdown = Mutex<(reason: ShutdownReason?, waiter: CheckedContinuation<ShutdownReason, Never>?)>((nil, nil))
    // DispatchSources are safe to use from any thread; Dispatch does not mark them Sendable.
    nonisolated(unsafe) private let signalSources: [any DispatchSourceSignal]

    private init(connection: DBusConnection, service: PreferencesService, lock: StoreLock) {
        self.connection = connection
        self.service = service
        self.lock = lock
        signalSources = [SIGTERM, SIGINT].map { number in
            signal(number, SIG_IGN)
            return DispatchSource.makeSignalSource(signal: number, queue: .global())
        }
    }

    /// Connects, exports the object, takes the bus name, then opens and loads the store.
    /// The object is exported before the name is taken, so calls that activated the
    /// service wait for the store instead of finding no object.
    static func start(
        configuration: ServiceConfiguration, busAddress: String?, replace: Bool, logger: Logger
    ) async throws -> Daemon {
        let connection: DBusConnection
        do {
            let environment = ProcessInfo.processInfo.environment
            if let busAddress {
                connection = try DBusConnection.connect(address: busAddress)
            } else if environment["DBUS_STARTER_BUS_TYPE"] == "session", let starter = environment["DBUS_STARTER_ADDRESS"] {
                // Started by bus activation: serve the bus that started us.
                connection = try DBusConnection.connect(address: starter)
            } else {
                connection = try DBusConnection.connectToSessionBus()
            }
        } catch {
            throw StartupError.bus(error)
        }
        let service = PreferencesService(connection: connection, configuration: configuration, logger: logger)
        do {
            try service.register()
            let flags = NameFlag.allowReplacement | NameFlag.doNotQueue | (replace ? NameFlag.replaceExisting : 0)
            let reply = try await connection.requestName(PreferencesBus.busName, flags: flags)
            guard reply == NameReply.primaryOwner || reply == NameReply.alreadyOwner else {
                connection.close()
                throw StartupError.nameTaken
            }
        } catch let error as StartupError {
            throw error
        } catch let error as DBusError {
            throw StartupError.bus(error)
        }
        logger.info("owns \(PreferencesBus.busName)", metadata: ["connection": "\(connection.uniqueName)"])

        let lock: StoreLock
        let store: DomainStore
        do {
            lock = try StoreLock(directory: configuration.storeDirectory)
            store = try DomainStore(directory: configuration.storeDirectory, logger: logger)
            try service.start(store: store)
        } catch {
            connection.close()
            throw StartupError.store(error)
        }
        if let recovered = store.recoveredFrom {
            logger.error("the store was damaged and has been moved aside; prefsd started with an empty store",
                         metadata: ["damagedCopy": "\(recovered.path)"])
        }
        let daemon = Daemon(connection: connection, service: service, lock: lock)
        daemon.watchForShutdown()
        return daemon
    }

    private func watchForShutdown() {
        connection.setDisconnectHandler { [self] in end(.busGone) }
        connection.setSignalHandler { [self] message in
            if message.sender == "org.freedesktop.DBus", message.member == "NameLost",
               message.body.first == .string(PreferencesBus.busName) {
                end(.replaced)
            }
        }
        for source in signalSources {
            let number = Int32(source.handle)
            source.setEventHandler { [self] in end(.signal(number)) }
            source.resume()
        }
    }

    private func end(_ reason: ShutdownReason) {
        let waiter = shutdown.withLock { state -> CheckedContinuation<ShutdownReason, Never>? in
            guard state.reason == nil else { return nil }
            state.reason = reason
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume(returning: reason)
    }

    /// Waits until a signal, the bus or a replacement ends the service.
    func waitForShutdown() async -> ShutdownReason {
        await withCheckedContinuation { continuation in
            let reason = shutdown.withLock { state -> ShutdownReason? in
                if let reason = state.reason { return reason }
                state.waiter = continuation
                return nil
            }
            if let reason { continuation.resume(returning: reason) }
        }
    }

    /// Finishes every accepted write, answers it, and closes the store and the bus.
    func stop() {
        for source in signalSources { source.cancel() }
        service.stop()
        connection.close()
        _ = lock
    }
}

/// Flags of `org.freedesktop.DBus.RequestName`.
enum NameFlag {
    static let allowReplacement: UInt32 = 1
    static let replaceExisting: UInt32 = 2
    static let doNotQueue: UInt32 = 4
}

/// Replies of `org.freedesktop.DBus.RequestName`.
enum NameReply {
    static let primaryOwner: UInt32 = 1
    static let alreadyOwner: UInt32 = 4
}
