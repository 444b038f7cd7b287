import ArgumentParser
import DBus
import Dconf
import Foundation
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesRoaming
import PreferencesService
import PreferencesStore
import ProcessMemory
import SettingsBundle

/// How long after its store is loaded prefsd gives back what its start used: what follows the
/// load takes well under a second on a desktop's store.
let startSettlingTime = Duration.seconds(2)

/// How long without a call before prefsd gives back what its last calls used: a desktop's
/// calls come in bursts (a program starting reads its domains, a settings panel writes a
/// few keys) a few milliseconds apart, with seconds to hours between bursts.
let idleReleaseDelay = Duration.milliseconds(250)

/// `prefsd`: the session-bus preferences service.
@main
struct Prefsd: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefsd",
        abstract: "Serve NSUserDefaults-style preference domains on the D-Bus session bus.",
        discussion: """
            prefsd owns the bus name \(PreferencesBus.busName) and keeps persistent domains in an \
            SQLite store. It is normally started by the session bus or systemd on first use. It \
            exits when the bus goes away, and on SIGTERM or SIGINT once every acknowledged write \
            is on disk.

            Log: prefsd logs to its standard error, at --log-level. Started through systemd \
            (the bus hands its start to prefsd.service where a systemd user manager runs), \
            that is the journal: journalctl --user -u prefsd. Started by the bus without \
            systemd, it is the bus daemon's standard error (the session's log, or the \
            terminal of dbus-run-session). Run by hand (make run), it is the terminal.

            Files:
              $XDG_CONFIG_HOME/prefsd, or ~/.config/prefsd
                  the user's store (--store)
              \(ServiceConfiguration.defaultManagedDirectory.path)
                  the administrator's forced domains, <domain>.plist (--managed-dir)
              \(ServiceConfiguration.defaultDefaultsDirectory.path)
                  the administrator's defaults, <domain>.plist (--defaults-dir)
              $DCONF_PROFILE, else /etc/dconf/profile/user
                  the dconf profile naming the system databases (--dconf-profile)
              \(ServiceConfiguration.defaultDconfDatabaseDirectory.path)
                  dconf's system databases, NAME.d/ and NAME.d/locks/ (--dconf-db-dir)
              $XDG_DATA_HOME/prefsd/settings, then each of $XDG_DATA_DIRS
                  settings bundles, for their IsSecure keys (--settings-dir)
              $XDG_DATA_HOME/prefsd/roaming, or ~/.local/share/prefsd/roaming
                  the roaming folder (--roaming-dir)
              $XDG_CONFIG_HOME/dconf/user
                  dconf's user database, kept a mirror of the store with --dconf

            Exit status:
              0   stopped by SIGTERM or SIGINT, by the bus going away, or by --replace
              64  a bad flag (prefsd --help)
              69  no bus: DBUS_SESSION_BUS_ADDRESS unset, or the bus cannot be reached
              74  the store cannot be opened, or another prefsd serves it (the path and
                  the reason are logged)
              75  another prefsd owns the name on this bus
            """,
        version: PrefsdVersion.current
    )

    @Option(
        name: .customLong("store"),
        help: ArgumentHelp("The store directory (default: $XDG_CONFIG_HOME/prefsd, or ~/.config/prefsd).", valueName: "dir"))
    var storeDirectory: String?

    @Option(
        name: .customLong("address"),
        help: ArgumentHelp(
            "Serve on the bus at this address instead of the session bus (DBUS_SESSION_BUS_ADDRESS).", valueName: "address"))
    var busAddress: String?

    @Option(
        name: .customLong("managed-dir"),
        help: ArgumentHelp(
            "The administrator's managed (forced) domains, <domain>.plist files.", valueName: "dir"))
    var managedDirectory: String = ServiceConfiguration.defaultManagedDirectory.path

    @Option(
        name: .customLong("defaults-dir"),
        help: ArgumentHelp(
            "The administrator's defaults, <domain>.plist files a user's own values override.", valueName: "dir"))
    var defaultsDirectory: String = ServiceConfiguration.defaultDefaultsDirectory.path

    @Option(
        name: .customLong("dconf-profile"),
        help: ArgumentHelp(
            "The dconf profile naming the system databases (system-db:NAME lines) to apply (default: as dconf finds it, $DCONF_PROFILE else /etc/dconf/profile/user).",
            valueName: "file"))
    var dconfProfile: String?

    @Option(
        name: .customLong("dconf-db-dir"),
        help: ArgumentHelp(
            "The directory of dconf's system databases: NAME.d/ keyfiles (defaults) and NAME.d/locks/ (forced keys).", valueName: "dir"))
    var dconfDatabaseDirectory: String = ServiceConfiguration.defaultDconfDatabaseDirectory.path

    @Flag(
        help: ArgumentHelp(
            "Trust managed, defaults and dconf database directories not owned by root (for tests and development only).", visibility: .hidden))
    var allowUnownedManagedDir = false

    @Flag(help: "Take the bus name over from a running prefsd, which finishes its writes and exits.")
    var replace = false

    @Flag(
        help: ArgumentHelp(
            "Also serve dconf's protocol as ca.desrt.dconf, in dconf-service's place, and keep dconf's user database ($XDG_CONFIG_HOME/dconf/user) a mirror of the store."
        ))
    var dconf = false

    @Flag(
        help: ArgumentHelp(
            "Also serve xfconf's protocol as org.xfce.Xfconf, in xfconfd's place: channel C is the domain xfconf.C, property /a/b its key a/b."
        ))
    var xfconf = false

    @Option(help: ArgumentHelp("Largest value, in bytes as marshalled on the bus.", valueName: "bytes"))
    var maxValueSize = ServiceLimits.default.valueBytes

    @Option(help: ArgumentHelp("Largest persistent domain, in bytes.", valueName: "bytes"))
    var maxDomainSize = ServiceLimits.default.domainBytes

    @Option(help: ArgumentHelp("Largest persistent store, in bytes.", valueName: "bytes"))
    var maxStoreSize = ServiceLimits.default.storeBytes

    @Option(help: ArgumentHelp("Largest total of all volatile domains, in bytes.", valueName: "bytes"))
    var maxVolatileSize = ServiceLimits.default.volatileBytes

    @Option(help: ArgumentHelp("Deepest nesting of arrays and dictionaries in a value.", valueName: "levels"))
    var maxNesting = ServiceLimits.default.nesting

    @Option(name: .customLong("max-domains"), help: ArgumentHelp("Most persistent domains.", valueName: "count"))
    var maxDomains = ServiceLimits.default.domainCount

    @Option(help: ArgumentHelp("Most keys in one domain (persistent, volatile or managed).", valueName: "count"))
    var maxKeysPerDomain = ServiceLimits.default.keysPerDomain

    @Option(name: .customLong("max-volatile-domains"), help: ArgumentHelp("Most volatile domains.", valueName: "count"))
    var maxVolatileDomains = ServiceLimits.default.volatileDomainCount

    @Option(help: ArgumentHelp("Largest managed (administrator's) .plist file, in bytes.", valueName: "bytes"))
    var maxManagedFileSize = ServiceLimits.default.managedFileBytes

    @Option(help: ArgumentHelp("Largest reply or signal sent, in bytes (at most the bus's max_message_size).", valueName: "bytes"))
    var maxReplySize = ServiceLimits.default.replyBytes

    @Option(
        help: ArgumentHelp(
            "Most calls of one client held while prefsd learns who it is; more are refused LimitsExceeded.", valueName: "count"))
    var maxHeldCalls = ServiceLimits.default.heldCallsPerSender

    @Option(
        help: ArgumentHelp(
            "Most bytes of calls of one client held while prefsd learns who it is (its first call is held whatever its size).", valueName: "bytes"))
    var maxHeldSize = ServiceLimits.default.heldBytesPerSender

    @Option(help: ArgumentHelp("Most calls held while the store loads (more are refused with LimitsExceeded).", valueName: "count"))
    var maxWaitingCalls = ServiceLimits.default.waitingCalls

    @Option(help: ArgumentHelp("Most bytes of calls held while the store loads.", valueName: "bytes"))
    var maxWaitingSize = ServiceLimits.default.waitingBytes

    @Option(
        name: .customLong("max-app-store-size"),
        help: ArgumentHelp(
            "Largest total of one sandboxed application's persistent domains (its own and its suites), in bytes (default: 1/8 of --max-store-size).",
            valueName: "bytes"))
    var maxAppStoreSize: Int?

    @Option(
        name: .customLong("max-app-domains"),
        help: ArgumentHelp(
            "Most persistent domains of one sandboxed application (default: 1/100 of --max-domains).", valueName: "count"))
    var maxAppDomains: Int?

    @Option(
        name: .customLong("max-app-volatile-size"),
        help: ArgumentHelp(
            "Largest total of one sandboxed application's volatile domains, in bytes (default: 1/8 of --max-volatile-size).", valueName: "bytes"))
    var maxAppVolatileSize: Int?

    @Option(
        name: .customLong("max-app-volatile-domains"),
        help: ArgumentHelp(
            "Most volatile domains of one sandboxed application (default: 1/100 of --max-volatile-domains).", valueName: "count"))
    var maxAppVolatileDomains: Int?

    @Option(
        name: .customLong("max-app-subscriptions"),
        help: ArgumentHelp(
            "Most domain subscriptions of one sandboxed application over all its connections (default 1024).", valueName: "count"))
    var maxAppSubscriptions: Int?

    @Option(
        help: ArgumentHelp(
            "Most key changes the history keeps; the oldest changes are dropped past it (0: keep no history).", valueName: "count"))
    var historyEntries = HistoryBounds.defaults.entries

    @Option(
        help: ArgumentHelp(
            "Most bytes the history keeps (keys, values and previous values, plus a small overhead); the oldest changes are dropped past it.",
            valueName: "bytes"))
    var historySize = HistoryBounds.defaults.bytes

    @Option(
        name: .customLong("settings-dir"),
        help: ArgumentHelp(
            "A prefsd/settings folder of settings bundles whose IsSecure keys the history records without values; repeatable, and in place of the XDG data directories' (the default).",
            valueName: "directory"))
    var settingsDirectories: [String] = []

    @Option(
        name: .customLong("roaming-dir"),
        help: ArgumentHelp(
            "The roaming folder a sync engine (Syncthing) keeps the same on every machine (default: $XDG_DATA_HOME/prefsd/roaming).",
            valueName: "dir"))
    var roamingDirectory: String?

    @Option(help: ArgumentHelp("Largest roaming file, this machine's or another's, in bytes.", valueName: "bytes"))
    var maxRoamingFileSize = RoamingLimits.default.fileBytes

    @Option(
        name: .customLong("roaming-machine-id-file"),
        help: ArgumentHelp(
            "Test hook: read the machine ID the roaming identity derives from here, not /etc/machine-id.", valueName: "file", visibility: .hidden))
    var roamingMachineIDFile: String?

    @Option(
        name: .customLong("roaming-clock-offset"),
        help: ArgumentHelp(
            "Test hook: add this many milliseconds to the clock of roaming changes.", valueName: "ms", visibility: .hidden))
    var roamingClockOffset: Int64 = 0

    @Option(
        name: .customLong("roaming-apply-delay"),
        help: ArgumentHelp(
            "Test hook: pause this many milliseconds before and after committing other machines' changes.", valueName: "ms", visibility: .hidden))
    var roamingApplyDelay: Int = 0

    @Option(help: ArgumentHelp("trace, debug, info, notice, warning, error or critical.", valueName: "level"))
    var logLevel: String = "info"

    func validate() throws {
        guard Logger.Level(rawValue: logLevel) != nil else {
            throw ValidationError("unknown log level \"\(logLevel)\"; use trace, debug, info, notice, warning, error or critical")
        }
        for (name, value) in [
            ("--max-value-size", maxValueSize), ("--max-domain-size", maxDomainSize),
            ("--max-store-size", maxStoreSize), ("--max-volatile-size", maxVolatileSize),
            ("--max-nesting", maxNesting), ("--max-domains", maxDomains),
            ("--max-keys-per-domain", maxKeysPerDomain), ("--max-volatile-domains", maxVolatileDomains),
            ("--max-managed-file-size", maxManagedFileSize), ("--max-reply-size", maxReplySize),
            ("--max-held-calls", maxHeldCalls), ("--max-held-size", maxHeldSize),
            ("--max-waiting-calls", maxWaitingCalls), ("--max-waiting-size", maxWaitingSize),
            ("--max-roaming-file-size", maxRoamingFileSize),
        ] where value <= 0 {
            throw ValidationError("\(name) must be a positive number, not \(value)")
        }
        for (name, value) in [
            ("--max-app-store-size", maxAppStoreSize), ("--max-app-domains", maxAppDomains),
            ("--max-app-volatile-size", maxAppVolatileSize), ("--max-app-volatile-domains", maxAppVolatileDomains),
            ("--max-app-subscriptions", maxAppSubscriptions),
        ] {
            if let value, value <= 0 { throw ValidationError("\(name) must be a positive number, not \(value)") }
        }
        for (name, value) in [("--history-entries", historyEntries), ("--history-size", historySize)] where value < 0 {
            throw ValidationError("\(name) must be 0 (no history) or more, not \(value)")
        }
        if maxReplySize > 128 << 20 {
            throw ValidationError("--max-reply-size must be at most 134217728, the largest message D-Bus allows")
        }
    }

    func run() async throws {
        // Listen for SIGTERM and SIGINT before anything else, so none is lost while starting.
        let shutdown = Shutdown()
        // The argument parser's reflection (its first casts scan every protocol conformance of
        // the executable) has mapped code and metadata that prefsd does not run again: given
        // back before the start, so that the start's peak does not hold them as well
        // (docs/benchmarks.md, "The start's peak").
        ProcessMemory.releaseFilePages()
        // Past a file-size limit (RLIMIT_FSIZE) the kernel sends SIGXFSZ, whose default
        // action kills the process: ignored, the write fails with EFBIG instead, the
        // transaction is rolled back and the call is answered `StorageFailed`.
        signal(SIGXFSZ, SIG_IGN)
        let level = Logger.Level(rawValue: logLevel) ?? .info
        LoggingSystem.bootstrap { label in
            var handler = StreamLogHandler.standardError(label: label)
            handler.logLevel = level
            return handler
        }
        let logger = Logger(label: "prefsd")
        var limits = ServiceLimits(
            valueBytes: maxValueSize, domainBytes: maxDomainSize, storeBytes: maxStoreSize,
            volatileBytes: maxVolatileSize, nesting: maxNesting, domainCount: maxDomains,
            keysPerDomain: maxKeysPerDomain, volatileDomainCount: maxVolatileDomains, managedFileBytes: maxManagedFileSize,
            replyBytes: maxReplySize, heldCallsPerSender: maxHeldCalls, heldBytesPerSender: maxHeldSize
        )
        limits.waitingCalls = maxWaitingCalls
        limits.waitingBytes = maxWaitingSize
        if let maxAppStoreSize { limits.applicationStoreBytes = maxAppStoreSize }
        if let maxAppDomains { limits.applicationDomainCount = maxAppDomains }
        if let maxAppVolatileSize { limits.applicationVolatileBytes = maxAppVolatileSize }
        if let maxAppVolatileDomains { limits.applicationVolatileDomainCount = maxAppVolatileDomains }
        if let maxAppSubscriptions { limits.applicationSubscriptions = maxAppSubscriptions }
        var configuration = ServiceConfiguration(
            storeDirectory: storeDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) }
                ?? ServiceConfiguration.defaultStoreDirectory(),
            limits: limits,
            version: PrefsdVersion.current,
            managedDirectory: URL(fileURLWithPath: managedDirectory, isDirectory: true),
            requireRootOwnedManagedDirectory: !allowUnownedManagedDir
        )
        configuration.historyBounds = HistoryBounds(entries: historyEntries, bytes: historySize)
        configuration.defaultsDirectory = URL(fileURLWithPath: defaultsDirectory, isDirectory: true)
        configuration.dconfProfile = dconfProfile.map { URL(fileURLWithPath: $0).path }
        configuration.dconfDatabaseDirectory = URL(fileURLWithPath: dconfDatabaseDirectory, isDirectory: true)
        let locator = settingsDirectories.isEmpty ? SettingsBundleLocator() : SettingsBundleLocator(searchDirectories: settingsDirectories)
        configuration.secureKeys = SecureKeys.installed(locator: locator, logger: logger)
        var roaming = RoamingConfiguration(
            directory: roamingDirectory.map { URL(fileURLWithPath: $0, isDirectory: true) } ?? RoamingConfiguration.defaultDirectory()
        )
        if let roamingMachineIDFile { roaming.machineIDFile = URL(fileURLWithPath: roamingMachineIDFile) }
        roaming.clockOffsetMilliseconds = roamingClockOffset
        roaming.applyDelayMilliseconds = max(0, roamingApplyDelay)
        roaming.limits.fileBytes = maxRoamingFileSize
        configuration.roaming = roaming
        if dconf { configuration.dconf = DconfFiles(name: "user", environment: ProcessInfo.processInfo.environment) }
        // Values of GSettings keys are held to the schemas GLib programs of this environment read.
        configuration.readSchemas(environment: ProcessInfo.processInfo.environment)
        configuration.xfconf = xfconf
        // What the start allocated and freed, and the code and read-only data it mapped, are
        // given back once it has settled: a little after the load, as what follows the load
        // (the administrator's settings read, roaming's first pass, the snapshots written
        // ahead) is start too; and then again whenever calls have stopped coming, so that
        // an idle prefsd keeps only what its last calls touched (docs/benchmarks.md,
        // "prefsd's memory").
        let idleRelease = IdleRelease(delay: idleReleaseDelay)
        configuration.afterLoad = { idleRelease.start(after: startSettlingTime) }
        do {
            let daemon = try await Daemon.start(
                configuration: configuration, busAddress: busAddress, replace: replace, shutdown: shutdown,
                callCame: { idleRelease.callCame() }, logger: logger
            )
            let reason = await daemon.waitForShutdown()
            logger.info("shutting down", metadata: ["reason": "\(reason)"])
            daemon.stop()
            logger.info("stopped; every acknowledged write is on disk")
        } catch let error as StartupError {
            logger.critical("\(error)")
            throw ExitCode(error.exitCode)
        }
    }
}
