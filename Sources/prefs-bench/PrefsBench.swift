import ArgumentParser
import BenchmarkKit
import DBus
import Foundation

@main
struct PrefsBench: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefs-bench",
        abstract: "Measures prefsd next to the bus's own floor and dconf-service, on one private bus.",
        discussion: """
            Everything runs on this machine: a private dbus-daemon on a unix socket, prefsd \
            (the release build next to this executable) and, unless skipped or missing, \
            /usr/libexec/dconf-service. Prints a Markdown table of medians, p99s and ratios.
            """)

    @Flag(help: "A short run: fewer samples, shorter loops (figures are noisier).")
    var quick = false

    @Option(help: ArgumentHelp("Store sizes for the Read/Write sweep, comma-separated.", valueName: "n,n,…"))
    var keys = "0,1000,10000,100000"

    @Flag(help: "Do not run dconf-service (its columns say so).")
    var skipDconf = false

    @Flag(help: "Install the Debian package dconf-service with apt-get when it is missing.")
    var installDconf = false

    @Option(
        help: ArgumentHelp(
            "Largest store dconf is filled to: it rewrites its whole database on every change, and filling 100k keys takes minutes.",
            valueName: "n"))
    var dconfMaxKeys = 10_000

    @Option(help: ArgumentHelp("Seconds allowed for filling dconf; sizes it cannot reach in time are capped.", valueName: "s"))
    var dconfFillSeconds: Double = 120

    @Flag(help: "Only compare GSettings reads through GSETTINGS_BACKEND=dconf and =prefsd (needs cc and libglib2.0-dev).")
    var gsettings = false

    @Flag(help: "Only the whole-process GSettings row: `gsettings get` with dconf and with prefsd taking turns, wall time and peak RSS, and the module's size.")
    var gsettingsProcess = false

    @Flag(help: "Measure only the rapid writes through the library (100,000 sets of one key).")
    var onlyRapidWrites = false

    @Flag(help: "Measure only the cached string(forKey:) hit, beside Foundation's UserDefaults.")
    var onlyCachedReads = false

    @Flag(
        help:
            "Measure only Read beside Ping (at 0 keys), the GDBus reference client's Read, and prefsd beside the minimal libdbus service and the store floor through GDBus (needs cc, libglib2.0-dev, libdbus-1-dev and libsqlite3-dev)."
    )
    var onlyClientReads = false

    @Flag(
        help:
            "Measure only prefsd beside the minimal libdbus service (the floor), Read/Ping and durable Write through the GDBus reference client, and the store floor's durable Write (needs cc, libglib2.0-dev, libdbus-1-dev and libsqlite3-dev)."
    )
    var onlyFloor = false

    @Flag(help: "Print the store floor's C source (the libdbus + SQLite service of the floor rows, as scripts/write-phases compiles it) and exit.")
    var storeFloorSource = false

    @Flag(
        help:
            "Measure only what the change journal costs: Write p50 beside a prefsd with --history-entries 0, and the journal's size after --history-changes changes of one key."
    )
    var onlyHistory = false

    @Flag(
        help:
            "Measure only roaming: a write on A to its Changed on B through two Syncthing instances on 127.0.0.1, and remote changes applied per second (needs syncthing)."
    )
    var onlyRoaming = false

    @Flag(
        help:
            "Measure only what holding values to the installed GSettings schemas costs: the check of a schema key's Write, reading the schemas, and prefsd's start and memory with them and without (needs gsettings-desktop-schemas)."
    )
    var onlySchemas = false

    @Flag(
        help:
            "Measure only prefsd --dconf beside dconf-service, each on its own bus: `dconf write` and `gsettings get` as whole processes, `Change` at 10,000 keys, and prefsd's Write with and without --dconf (needs dconf-cli, dconf-service and dconf-gsettings-backend)."
    )
    var onlyDconf = false

    @Flag(
        help:
            "Measure only prefsd --xfconf beside Debian's xfconfd, each on its own bus: GetProperty, SetProperty and a burst of 1,000 SetProperty at 10 and 10,000 properties (needs the xfconf package)."
    )
    var onlyXfconf = false

    @Flag(
        help:
            "Measure only the cold start: prefsd launched on a store of 100,000 keys in 1,000 domains to its first Read of a stored key answered, several rounds, beside `prefsd --version`."
    )
    var onlyColdStart = false

    @Flag(
        help:
            "Measure only memory: prefsd idle after one durable Write beside the Swift floor (prefs-bench-floor: libdbus, GRDB, the Swift runtime and Foundation linked as prefsd is), the store floor and dconf-service, several starts taking turns, and each executable stripped."
    )
    var onlyMemory = false

    @Option(
        help: ArgumentHelp(
            "With --only-cold-start or --only-memory: another prefsd executable measured in the same rounds, taking turns.", valueName: "path"))
    var comparePrefsd: String?

    @Option(
        help: ArgumentHelp(
            "With --only-cold-start or --only-memory: launches of each service (default 15 and 5, 5 and 3 with --quick).", valueName: "n"))
    var rounds: Int?

    @Option(help: ArgumentHelp("Changes of one key made for the journal's size row (through the store's writer, in process).", valueName: "n"))
    var historyChanges = 1_000_000

    @Flag(help: .hidden) var observerChild = false
    @Option(help: .hidden) var address: String?
    @Option(help: .hidden) var childCount = 1

    func validate() throws {
        guard sizes != nil else { throw ValidationError("--keys takes comma-separated non-negative numbers") }
        guard (rounds ?? 1) > 0 else { throw ValidationError("--rounds must be a positive number") }
        guard historyChanges > 0 else { throw ValidationError("--history-changes must be a positive number, not \(historyChanges)") }
    }

    var sizes: [Int]? {
        let parts = keys.split(separator: ",").map { Int($0.trimmingCharacters(in: .whitespaces)) }
        guard !parts.isEmpty, parts.allSatisfy({ ($0 ?? -1) >= 0 }) else { return nil }
        return parts.compactMap { $0 }.sorted()
    }

    func run() throws {
        if observerChild {
            guard let address else { throw ValidationError("--observer-child needs --address") }
            throw ExitCode(runObserverChild(bus: address, count: childCount))
        }
        if storeFloorSource { return print(try storeFloorCSource(), terminator: "") }
        if gsettingsProcess { return try GSettingsProcessBench(quick: quick).run() }
        if gsettings {
            try GSettingsBench(quick: quick).run()
            return try GSettingsProcessBench(quick: quick).run()
        }
        if onlyHistory { return try HistoryBench(quick: quick, changes: historyChanges).run() }
        if onlyMemory { return try MemoryBench(other: comparePrefsd, rounds: rounds ?? (quick ? 3 : 5)).run() }
        if onlyColdStart { return try ColdStartBench(quick: quick, other: comparePrefsd, rounds: rounds ?? (quick ? 5 : 15)).run() }
        if onlyDconf { return try DconfBench(quick: quick).run() }
        if onlyXfconf { return try XfconfBench(quick: quick).run() }
        if onlyRoaming { return try RoamingBench(quick: quick).run() }
        if onlySchemas { return try SchemaBench(quick: quick).run() }
        try Benchmark(options: self).run()
    }
}
