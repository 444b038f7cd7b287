import DBus
import Dconf
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
        case .bus: 69  // EX_UNAVAILABLE
        case .nameTaken: 75  // EX_TEMPFAIL: one is running already
        case .store: 74  // EX_IOERR
        }
    }
}

/// A running prefsd: the connection, the service and the store, and what ends them.
final class Daemon: Sendable {
    private let connection: DBusConnection
    private let doorConnection: DBusConnection
    /// The connection owning dconf's name, with `--dconf`.
    private let dconfConnection: DBusConnection?
    /// The connection owning xfconf's name, with `--xfconf`.
    private let xfconfConnection: DBusConnection?
    private let service: PreferencesService
    private let lock: StoreLock
    private let shutdown: Shutdown

    private init(
        connection: DBusConnection, doorConnection: DBusConnection, dconfConnection: DBusConnection?, xfconfConnection: DBusConnection?,
        service: PreferencesService, lock: StoreLock, shutdown: Shutdown
    ) {
        self.connection = connection
        self.doorConnection = doorConnection
        self.dconfConnection = dconfConnection
        self.xfconfConnection = xfconfConnection
        self.service = service
        self.lock = lock
        self.shutdown = shutdown
    }

    /// Connects, exports the object, takes the bus name, then opens and loads the store.
    /// The object is exported before the name is taken, so calls that activated the
    /// service wait for the store instead of finding no object. `callCame` is told of every
    /// call to prefsd's objects, on every connection.
    static func start(
        configuration: ServiceConfiguration, busAddress: String?, replace: Bool, shutdown: Shutdown,
        callCame: @escaping @Sendable () -> Void, logger: Logger
    ) async throws -> Daemon {
        let connection: DBusConnection
        let doorConnection: DBusConnection
        let dconfConnection: DBusConnection?
        let xfconfConnection: DBusConnection?
        let environment = ProcessInfo.processInfo.environment
        // Started by bus activation: serve the bus that started us.
        let starter = environment["DBUS_STARTER_BUS_TYPE"] == "session" ? environment["DBUS_STARTER_ADDRESS"] : nil
        var configuration = configuration
        configuration.keepSnapshots(busAddress: busAddress ?? starter, environment: environment)
        do {
            func open() throws(DBusError) -> DBusConnection {
                if let address = busAddress ?? starter { return try DBusConnection.connect(address: address) }
                return try DBusConnection.connectToSessionBus()
            }
            connection = try open()
            // The door for sandboxed applications: a connection of its own, so that
            // they can talk to it without seeing the main name's broadcasts.
            doorConnection = try open()
            // dconf's name likewise: a sandboxed application given it reaches nothing else
            // of prefsd's (see `PreferencesService+Dconf.swift`).
            dconfConnection = configuration.dconf == nil ? nil : try open()
            // And xfconf's (see `PreferencesService+Xfconf.swift`).
            xfconfConnection = configuration.xfconf ? try open() : nil
        } catch {
            throw StartupError.bus(error)
        }
        for served in [connection, doorConnection] + [dconfConnection, xfconfConnection].compactMap({ $0 }) {
            served.setCallObserver(callCame)
        }
        // Once there is a bus (without one, nothing is made on disk), the store is opened and
        // checked beside the rest of the bus setup when no other prefsd holds it; otherwise
        // after the name is taken, once a prefsd this one replaces has let it go.
        let early = OpenedStore.openingBeside(configuration: configuration, logger: logger)
        // Follow the bus and the name from the start: a `--replace` (NameLost) or a lost bus
        // that comes while the store is still loading is kept by `shutdown` and ends this
        // instance as soon as it has started, so the new one gets the store lock at once.
        connection.setDisconnectHandler { shutdown.end(.busGone) }
        connection.setSignalHandler { message in
            if message.sender == BusDriver.name, message.member == BusDriver.nameLost,
                message.body.first == .string(PreferencesBus.busName)
            {
                shutdown.end(.replaced)
            }
        }
        let door = SandboxDoor(
            connection: doorConnection, version: configuration.version, logger: logger,
            subscriptionsPerApplication: configuration.limits.applicationSubscriptions)
        let service = PreferencesService(
            connection: connection, door: door, dconfConnection: dconfConnection, xfconfConnection: xfconfConnection,
            configuration: configuration, logger: logger)
        func closeAll() {
            xfconfConnection?.close()
            dconfConnection?.close()
            doorConnection.close()
            connection.close()
        }
        let flags: UInt32
        do {
            try service.register()
            try await service.followDepartures()
            // What an earlier prefsd on this bus left is never read as this one's.
            service.clearSnapshots()
            flags = NameFlag.allowReplacement | NameFlag.doNotQueue | (replace ? NameFlag.replaceExisting : 0)
            let reply = try await connection.requestName(PreferencesBus.busName, flags: flags)
            guard reply == NameReply.primaryOwner || reply == NameReply.alreadyOwner else {
                closeAll()
                await early?.close()
                throw StartupError.nameTaken
            }
            let doorReply = try await doorConnection.requestName(SandboxBus.busName, flags: flags)
            if doorReply != NameReply.primaryOwner && doorReply != NameReply.alreadyOwner {
                logger.error("another process owns \(SandboxBus.busName): sandboxed applications cannot reach this prefsd")
            }
        } catch let error as StartupError {
            throw error
        } catch let error as DBusError {
            await early?.close()
            throw StartupError.bus(error)
        }
        logger.info("owns \(PreferencesBus.busName)", metadata: ["connection": "\(connection.uniqueName)"])

        let lock: StoreLock
        let store: DomainStore
        do throws(StoreError) {
            let opened: OpenedStore
            if let early {
                opened = try await early.value.get()
            } else {
                opened = try OpenedStore(configuration: configuration, logger: logger)
            }
            (lock, store) = (opened.lock, opened.store)
            store.setSecureKeys(configuration.secureKeys)
            try service.start(store: store)
        } catch {
            closeAll()
            throw StartupError.store(error)
        }
        // dconf's name once the store is loaded and dconf's file made from it: a dconf client
        // that finds prefsd there reads a file that holds everything.
        if service.servesDconf, let dconfConnection {
            await take(DconfBus.busName, on: dconfConnection, flags: flags, usualOwner: "dconf-service", clients: "dconf's clients", logger: logger)
        }
        // xfconf's name likewise once the store is loaded: its clients find every channel.
        if let xfconfConnection {
            await take(XfconfBus.busName, on: xfconfConnection, flags: flags, usualOwner: "xfconfd", clients: "xfconf's clients", logger: logger)
        }
        if let recovered = store.recoveredFrom {
            logger.error(
                "the store was damaged and has been moved aside; prefsd started with an empty store",
                metadata: ["damagedCopy": "\(recovered.path)"])
        }
        return Daemon(
            connection: connection, doorConnection: doorConnection, dconfConnection: dconfConnection,
            xfconfConnection: xfconfConnection, service: service, lock: lock, shutdown: shutdown)
    }

    /// Takes a protocol's bus name (dconf's, xfconf's) on the connection that serves it; a
    /// name another process holds (`usualOwner`, most likely) is logged, not fatal: prefsd
    /// serves its own name whatever becomes of that one.
    private static func take(
        _ name: String, on connection: DBusConnection, flags: UInt32, usualOwner: String, clients: String, logger: Logger
    ) async {
        do {
            let reply = try await connection.requestName(name, flags: flags)
            if reply != NameReply.primaryOwner && reply != NameReply.alreadyOwner {
                logger.error("another process owns \(name) (\(usualOwner)?): \(clients) do not reach this prefsd; stop it and start prefsd again")
            }
        } catch {
            logger.error("could not take \(name): \(error)")
        }
    }

    /// Waits until a signal, the bus or a replacement ends the service.
    func waitForShutdown() async -> ShutdownReason {
        await shutdown.wait()
    }

    /// Finishes every accepted write, answers it, and closes the store and the bus: dconf's
    /// and xfconf's names are let go first, once dconf's file holds every change prefsd
    /// acknowledged, so that the next owner of a name reads them all.
    func stop() {
        shutdown.cancel()
        service.stop()
        xfconfConnection?.close()
        dconfConnection?.close()
        doorConnection.close()
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
