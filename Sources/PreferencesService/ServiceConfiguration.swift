import Dconf
import Foundation
import GSettingsSchemas
import GSettingsSnapshots
import PreferencesModel
import PreferencesStore

/// How a service is set up: where it keeps its data and what it allows.
public struct ServiceConfiguration: Sendable {
    /// The directory of the persistent store.
    public var storeDirectory: URL
    /// The sizes the service refuses to pass.
    public var limits: ServiceLimits
    /// The version the `Version` property reports.
    public var version: String
    /// The administrator's managed domains (`/etc/prefsd/managed` by default).
    public var managedDirectory: URL
    /// Whether the managed directory is trusted only when owned by root and writable by
    /// no one else (on by default; tests turn it off for a directory they own).
    public var requireRootOwnedManagedDirectory: Bool
    /// How large the change journal may grow (`prefsd --history-entries`, `--history-size`).
    public var historyBounds: HistoryBounds = .defaults
    /// Keys whose changes the journal records without values, per domain: those settings
    /// bundles mark `IsSecure` (prefsd reads them at start).
    public var secureKeys: [DomainName: Set<String>] = [:]
    /// The roaming folder (`prefsd --roaming-dir`); `nil`: no roaming.
    public var roaming: RoamingConfiguration?
    /// The administrator's defaults, `<domain>.plist` files (`/etc/prefsd/defaults`;
    /// `prefsd --defaults-dir`).
    public var defaultsDirectory = defaultDefaultsDirectory
    /// The dconf profile whose `system-db:NAME` lines name dconf's system databases
    /// (`prefsd --dconf-profile`); `nil`: found as dconf finds it (`$DCONF_PROFILE`, else
    /// `/etc/dconf/profile/user`, see the README).
    public var dconfProfile: String?
    /// The directory of dconf's system databases, `NAME.d/` keyfiles and `NAME.d/locks/`
    /// (`/etc/dconf/db`; `prefsd --dconf-db-dir`).
    public var dconfDatabaseDirectory = defaultDconfDatabaseDirectory
    /// Where the snapshots of loaded domains go, for GSettings programs to map
    /// (`SnapshotLayout.directory`: under `$XDG_RUNTIME_DIR`, named by the bus); `nil`: none.
    public var snapshotDirectory: String?
    /// The directories of compiled GSettings schemas whose keys the service holds values to
    /// (``GSettingsSchemas/SchemaDirectories``, highest precedence first), watched while it
    /// runs; none: every key takes any value.
    public var schemaDirectories: [String] = []
    /// The dconf database prefsd serves as `ca.desrt.dconf` and keeps as a mirror of the
    /// store (`prefsd --dconf`); `nil`: prefsd does not speak dconf's protocol.
    public var dconf: DconfFiles?
    /// Whether prefsd also serves xfconf's protocol as `org.xfce.Xfconf` (`prefsd --xfconf`),
    /// channel `C` as the domain `xfconf.C`.
    public var xfconf = false
    /// Run once the whole store is loaded (or has failed to load), on the thread that loaded
    /// it, before the service turns to what waits for the whole store: prefsd schedules there
    /// giving back what its start used.
    public var afterLoad: (@Sendable () -> Void)?

    /// Sets ``snapshotDirectory`` for a prefsd serving the bus at `busAddress` (`nil`: the
    /// session bus `environment` names), under the user's runtime directory: none without one.
    public mutating func keepSnapshots(busAddress: String?, environment: [String: String]) {
        let runtime = environment["XDG_RUNTIME_DIR"]
        let address =
            busAddress
            ?? SnapshotLayout.sessionBusAddress(
                environmentAddress: environment["DBUS_SESSION_BUS_ADDRESS"], runtimeDirectory: runtime)
        snapshotDirectory = SnapshotLayout.directory(runtimeDirectory: runtime, busAddress: address)
    }

    /// Sets ``schemaDirectories`` to the directories GLib reads compiled schemas from for
    /// `environment` (`$GSETTINGS_SCHEMA_DIR`, `$XDG_DATA_HOME`, `$XDG_DATA_DIRS`).
    public mutating func readSchemas(environment: [String: String]) {
        schemaDirectories = SchemaDirectories.glib(environment: environment)
    }

    /// The default directory of the administrator's defaults.
    public static let defaultDefaultsDirectory = URL(fileURLWithPath: "/etc/prefsd/defaults", isDirectory: true)
    /// The default directory of dconf's system databases.
    public static let defaultDconfDatabaseDirectory = URL(fileURLWithPath: "/etc/dconf/db", isDirectory: true)

    /// The default managed directory.
    public static let defaultManagedDirectory = URL(fileURLWithPath: "/etc/prefsd/managed", isDirectory: true)

    /// Makes a configuration.
    public init(
        storeDirectory: URL, limits: ServiceLimits = .default, version: String,
        managedDirectory: URL = defaultManagedDirectory, requireRootOwnedManagedDirectory: Bool = true
    ) {
        self.storeDirectory = storeDirectory
        self.limits = limits
        self.version = version
        self.managedDirectory = managedDirectory
        self.requireRootOwnedManagedDirectory = requireRootOwnedManagedDirectory
    }

    /// Where the administrator's defaults and dconf's system databases are read from.
    var administratorSources: AdministratorSources {
        AdministratorSources(
            defaultsDirectory: defaultsDirectory, dconfProfile: dconfProfile, dconfDatabaseDirectory: dconfDatabaseDirectory,
            requireRootOwnership: requireRootOwnedManagedDirectory, environment: ProcessInfo.processInfo.environment,
            xfconfDirectories: xfconf ? xfconfChannelFiles.systemDirectories : []
        )
    }

    /// The default store directory: `$XDG_CONFIG_HOME/prefsd`, or `~/.config/prefsd`.
    public static func defaultStoreDirectory(environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let config = environment["XDG_CONFIG_HOME"], config.hasPrefix("/") {
            return URL(fileURLWithPath: config, isDirectory: true).appendingPathComponent("prefsd", isDirectory: true)
        }
        let home =
            environment["HOME"].map { URL(fileURLWithPath: $0, isDirectory: true) }
            ?? FileManager.default.homeDirectoryForCurrentUser
        return home.appendingPathComponent(".config/prefsd", isDirectory: true)
    }
}
