import DBus
import Dconf
import Foundation
import Logging
import PreferencesModel
import PreferencesService
import PreferencesStore

/// A ``PreferencesService`` served on an ``InMemoryConnection`` in the test's own process:
/// its store, managed directory and administrator's directories in a temporary directory
/// of its own, no bus and no prefsd process.
///
/// The service is registered at once; ``start()`` loads the store and starts answering
/// (calls delivered before wait, as in prefsd). ``stop()`` stops it and removes the
/// directory.
public final class InProcessService: Sendable {
    /// The connection the service is registered on: deliver calls and read answers here.
    public let connection: InMemoryConnection
    /// The connection serving dconf's objects, when the service serves dconf (`dconf: true`):
    /// deliver dconf's calls and read `Notify` here.
    public let dconfConnection: InMemoryConnection?
    /// dconf's files (its database and invalidation file), when the service serves dconf.
    public let dconfFiles: DconfFiles?
    /// The service.
    public let service: PreferencesService
    /// The temporary directory holding everything the service reads and writes.
    public let directory: URL
    /// The managed (forced) domains' directory, `<domain>.plist` files.
    public var managedDirectory: URL { directory.appendingPathComponent("managed", isDirectory: true) }
    private var storeDirectory: URL { directory.appendingPathComponent("store", isDirectory: true) }

    /// A service with `limits`, forcing `managed` (values by key, by domain), running
    /// `afterLoad` once its whole store is loaded (``ServiceConfiguration/afterLoad``), and
    /// serving dconf's protocol on a connection of its own when `dconf` is true (its files
    /// in the service's directory); registered, started when `start` is true.
    public init(
        limits: ServiceLimits = .default, managed: [String: [String: PropertyListValue]] = [:], dconf: Bool = false,
        start: Bool = true, afterLoad: (@Sendable () -> Void)? = nil
    ) throws {
        directory = FileManager.default.temporaryDirectory.appendingPathComponent("prefsd-inprocess-\(UUID().uuidString)", isDirectory: true)
        let managedDirectory = directory.appendingPathComponent("managed", isDirectory: true)
        try FileManager.default.createDirectory(at: managedDirectory, withIntermediateDirectories: true)
        var configuration = ServiceConfiguration(
            storeDirectory: directory.appendingPathComponent("store", isDirectory: true), limits: limits, version: "0.0.0-test",
            managedDirectory: managedDirectory, requireRootOwnedManagedDirectory: false)
        // The machine's administrator settings stay out: directories and a profile that do not exist.
        configuration.defaultsDirectory = directory.appendingPathComponent("defaults", isDirectory: true)
        configuration.dconfProfile = directory.appendingPathComponent("dconf-profile").path
        configuration.dconfDatabaseDirectory = directory.appendingPathComponent("dconf-db", isDirectory: true)
        configuration.afterLoad = afterLoad
        dconfFiles =
            dconf
            ? DconfFiles(
                name: "user", databaseDirectory: directory.appendingPathComponent("config/dconf").path,
                runtimeDirectory: directory.appendingPathComponent("runtime/dconf").path) : nil
        configuration.dconf = dconfFiles
        connection = InMemoryConnection()
        dconfConnection = dconf ? InMemoryConnection(uniqueName: ":1.2") : nil
        service = PreferencesService(
            connection: connection, dconfConnection: dconfConnection, configuration: configuration, logger: Self.logger)
        for (domain, values) in managed { try place(values, managedDomain: domain) }
        try service.register()
        if start { try self.start() }
    }

    /// Opens the store and starts answering, the calls that waited first.
    public func start() throws {
        let store = try DomainStore(directory: storeDirectory, logger: Self.logger)
        try service.start(store: store)
    }

    /// Writes `values` as the managed domain `domain`'s file, renamed into place as
    /// configuration management does (the service follows the directory).
    public func place(_ values: [String: PropertyListValue], managedDomain domain: String) throws {
        let temporary = managedDirectory.appendingPathComponent(".\(domain).tmp")
        try PropertyListValue.dictionary(values).xmlPropertyListData().write(to: temporary)
        guard rename(temporary.path, managedDirectory.appendingPathComponent("\(domain).plist").path) == 0 else {
            throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO)
        }
    }

    /// Stops the service (every accepted write durable and answered) and removes its directory.
    public func stop() {
        service.stop()
        try? FileManager.default.removeItem(at: directory)
    }

    /// Logs nothing: the tests read answers and signals, not the log.
    private static let logger = Logger(label: "prefsd.in-process") { _ in SwiftLogNoOpLogHandler() }
}
