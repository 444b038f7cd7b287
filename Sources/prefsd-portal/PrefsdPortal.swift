import ArgumentParser
import DBus
import Dispatch
import Foundation
import Logging
import PreferencesProxy
import SettingsPortal

/// `prefsd-portal`: the Settings portal backend, serving prefsd's settings to
/// xdg-desktop-portal and through it to sandboxed applications.
@main
struct PrefsdPortal: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefsd-portal",
        abstract: "Serve prefsd's settings to xdg-desktop-portal (org.freedesktop.impl.portal.Settings).",
        discussion: """
            Serves the namespace org.freedesktop.appearance from the prefsd domain of the same name \
            (color-scheme, accent-color, contrast, reduced-motion), and each domain listed in the \
            ExposedDomains key of io.github.prefsd.Portal as a namespace of its own, read-only. \
            Started by the session bus (the .portal and .service files make install puts in place); \
            exits when the bus goes away or on SIGTERM/SIGINT.

            Exit status: 0 stopped, 64 bad flag, 69 no bus, 75 another backend owns the name.
            """
    )

    @Option(help: "The bus to serve and read prefsd on (default: the session bus, or the bus that started it).")
    var address: String?

    @Flag(help: "Take the name over from another running backend.")
    var replace = false

    @Option(help: "trace, debug, info, notice, warning, error or critical.")
    var logLevel: Logger.Level = .info

    func run() async throws {
        let level = logLevel
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "prefsd-portal")
        let environment = ProcessInfo.processInfo.environment
        let busAddress = address ?? (environment["DBUS_STARTER_BUS_TYPE"] == "session" ? environment["DBUS_STARTER_ADDRESS"] : nil)

        let connection: DBusConnection
        let proxy: PreferencesProxy
        do {
            connection =
                try busAddress.map { address throws(DBusError) in try DBusConnection.connect(address: address) }
                ?? DBusConnection.connectToSessionBus()
            proxy = try PreferencesProxy.connect(address: busAddress)
        } catch {
            logger.critical("cannot reach the bus: \(error)")
            throw ExitCode(69)
        }
        let backend = SettingsPortalBackend(connection: connection, proxy: proxy, logger: logger)
        do {
            try await backend.start(replace: replace)
        } catch {
            logger.critical("cannot serve \(PortalBus.busName): \(error)")
            throw ExitCode(75)
        }
        logger.info("serving \(PortalBus.busName)")

        let (endings, ending) = AsyncStream<Void>.makeStream()
        connection.setDisconnectHandler { ending.yield() }
        signal(SIGINT, SIG_IGN)
        signal(SIGTERM, SIG_IGN)
        let sources = [SIGINT, SIGTERM].map { number in
            let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
            source.setEventHandler { ending.yield() }
            source.resume()
            return source
        }
        for await _ in endings { break }
        for source in sources { source.cancel() }
        backend.stop()
        proxy.close()
        connection.flush()
        connection.close()
    }
}

extension Logger.Level: @retroactive ExpressibleByArgument {}
