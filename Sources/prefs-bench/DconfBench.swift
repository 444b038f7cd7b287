import BenchmarkKit
import BusTestSupport
import DBus
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// `prefs-bench --only-dconf`: prefsd serving dconf's protocol (`prefsd --dconf`) beside
/// Debian's dconf-service, in one run. Each service has its own private bus and its own
/// `XDG_CONFIG_HOME`/`XDG_RUNTIME_DIR`; a third bus holds a prefsd without `--dconf` for the
/// native row. The two sides of every row take turns round by round (which goes first
/// alternates), and each figure is the median of its rounds:
///
/// 1. `dconf write /bench/k V` as a whole process (spawn to exit) on an otherwise empty
///    database, V alternating between 1 and 2 so that every write changes the value;
/// 2. a `Change` of one key through the bus at 10,000 keys in the database;
/// 3. `gsettings get` as a whole process on GSettings' stock dconf backend, reading a key of
///    a test schema that both services were given through `Change`;
/// 4. prefsd's own durable `Write` at 10,000 keys, with and without `--dconf` (the mirror's
///    cost on the native path).
struct DconfBench {
    let quick: Bool

    /// The test schema's id, path and key (`i`) for the `gsettings get` row.
    static let schemaID = "io.github.prefsd.DconfBench"
    static let schemaPath = "/bench/gsettings/"
    static let schemaKey = "answer"
    /// Keys in the database for the `Change` and `Write` rows.
    static let bigKeys = 10_000

    /// One service's side: its bus, a connection to it, and the environment a dconf client
    /// of it runs with.
    struct Side {
        let bus: PrivateBus
        let connection: DBusConnection
        let environment: [String: String]
    }

    func run() throws {
        let loadBefore = Machine.load
        let work = try makeTemporaryDirectory("prefs-bench-dconf")
        defer { try? FileManager.default.removeItem(at: work) }
        let dconfCommand = try findExecutable("dconf")
        let gsettings = try findExecutable("gsettings")
        let prefsdPath = try siblingExecutable("prefsd")
        let profile = work.appendingPathComponent("profile")
        try "user-db:user\n".write(to: profile, atomically: true, encoding: .utf8)
        let schemas = try Self.compileSchema(in: work)
        // A GIO module directory holding only dconf's GSettings backend, so no other module
        // of the machine loads.
        let modules = work.appendingPathComponent("gio-modules")
        try DconfGIOModule.link(into: modules)

        // dconf-service on its own bus.
        let dconfBus = try PrivateBus()
        defer { dconfBus.stop() }
        let dconfConnection = try DBusConnection.connect(address: dconfBus.address)
        defer { dconfConnection.close() }
        let dconf = try DconfInstance(bus: dconfBus.address)
        defer { dconf.stop() }
        try dconf.ensureRunning(probe: dconfConnection)

        // prefsd --dconf on its own bus, with directories laid out as dconf-service's.
        let prefsdBus = try PrivateBus()
        defer { prefsdBus.stop() }
        let prefsdConnection = try DBusConnection.connect(address: prefsdBus.address)
        defer { prefsdConnection.close() }
        let home = work.appendingPathComponent("prefsd-dconf")
        try DconfInstance.makeHome(home)
        var prefsdEnvironment = ProcessInfo.processInfo.environment.merging(DconfInstance.xdgEnvironment(home)) { $1 }
        prefsdEnvironment["DCONF_PROFILE"] = profile.path
        let prefsd = try PrefsdInstance(
            executable: prefsdPath, bus: prefsdBus.address, store: work.appendingPathComponent("store-dconf"),
            log: work.appendingPathComponent("prefsd-dconf.log"), probe: prefsdConnection, arguments: ["--dconf"],
            environment: prefsdEnvironment)
        defer { prefsd.stop() }
        try Self.waitForDconfName(prefsdConnection)

        // prefsd without --dconf on a third bus, for the native row.
        let plainBus = try PrivateBus()
        defer { plainBus.stop() }
        let plainConnection = try DBusConnection.connect(address: plainBus.address)
        defer { plainConnection.close() }
        let plain = try PrefsdInstance(
            executable: prefsdPath, bus: plainBus.address, store: work.appendingPathComponent("store-plain"),
            log: work.appendingPathComponent("prefsd-plain.log"), probe: plainConnection)
        defer { plain.stop() }

        func clientEnvironment(bus: String, directory: URL) -> [String: String] {
            var environment = ProcessInfo.processInfo.environment.merging(DconfInstance.xdgEnvironment(directory)) { $1 }
            for name in ["GIO_EXTRA_MODULES", "GIO_USE_VFS"] { environment[name] = nil }
            environment["DBUS_SESSION_BUS_ADDRESS"] = bus
            environment["HOME"] = directory.path
            environment["DCONF_PROFILE"] = profile.path
            environment["GSETTINGS_BACKEND"] = "dconf"
            environment["GIO_MODULE_DIR"] = modules.path
            environment["GSETTINGS_SCHEMA_DIR"] = schemas.path
            return environment
        }
        let sides = [
            Side(bus: dconfBus, connection: dconfConnection, environment: clientEnvironment(bus: dconfBus.address, directory: dconf.directory)),
            Side(bus: prefsdBus, connection: prefsdConnection, environment: clientEnvironment(bus: prefsdBus.address, directory: home)),
        ]
        let output = work.appendingPathComponent("client-output").path

        // 1. `dconf write` as a whole process, on an empty database.
        let writeRounds = quick ? 5 : 11
        log("dconf write, whole process, 0 keys: \(writeRounds) rounds")
        var writes = [[Double](), [Double]()]
        for round in 0...writeRounds {
            for side in Self.order(round) {
                try dconf.ensureRunning(probe: dconfConnection)
                let value = round % 2 == 0 ? "1" : "2"
                let run = try spawnTimed(dconfCommand, ["write", "/bench/k", value], environment: sides[side].environment, output: output)
                guard run.output.isEmpty else { throw BenchError("dconf write printed \(run.output)") }
                // The first round warms the page cache and the services.
                if round > 0 { writes[side].append(run.seconds) }
            }
        }
        for side in sides.indices {
            let read = try spawnTimed(dconfCommand, ["read", "/bench/k"], environment: sides[side].environment, output: output)
            guard read.output == (writeRounds % 2 == 0 ? "1\n" : "2\n") else {
                throw BenchError("after the writes, `dconf read /bench/k` gave \(read.output.debugDescription) on side \(side)")
            }
        }

        // 3. (set up before the fill) the key `gsettings get` reads, written through `Change`.
        for side in sides {
            try dconf.ensureRunning(probe: dconfConnection)
            _ = try side.connection.callBlocking(Calls.dconfChange([(Self.schemaPath + Self.schemaKey, .int32(42))]))
        }

        // 2. `Change` of one key at 10,000 keys, filled through dconf's protocol on both
        //    sides, into the directory that is prefsd's domain `bench.big`.
        log("filling both databases to \(Self.bigKeys) keys")
        for side in sides {
            try dconf.ensureRunning(probe: dconfConnection)
            _ = try side.connection.callBlocking(
                Calls.dconfChange((0..<Self.bigKeys).map { ("/bench/big/k\($0)", .int32(Int32($0))) }), timeout: .seconds(600))
        }
        // The same keys in the prefsd without --dconf, through its own interface.
        try fillPrefsd(plainConnection, from: 0, to: Self.bigKeys)
        // prefsd --dconf keeps dconf's keys in the domain the path rule gives: check it.
        _ = try prefsdConnection.callBlocking(Calls.read(bigDomain, "k\(Self.bigKeys - 1)"))
        let changeRounds = quick ? 10 : 30
        log("Change at \(Self.bigKeys) keys: \(changeRounds) rounds")
        var changes = [[Double](), [Double]()]
        for round in 0...changeRounds {
            for side in Self.order(round) {
                try dconf.ensureRunning(probe: dconfConnection)
                let seconds = try sides[side].connection.timed(Calls.dconfChange([("/bench/big/w", .int32(Int32(round)))]))
                if round > 0 { changes[side].append(seconds) }
            }
        }

        // 3. `gsettings get` as a whole process.
        let getRounds = quick ? 5 : 11
        log("gsettings get, whole process: \(getRounds) rounds")
        var gets = [[Double](), [Double]()]
        for round in 0...getRounds {
            for side in Self.order(round) {
                try dconf.ensureRunning(probe: dconfConnection)
                let run = try spawnTimed(gsettings, ["get", Self.schemaID, Self.schemaKey], environment: sides[side].environment, output: output)
                guard run.output == "42\n" else { throw BenchError("gsettings get printed \(run.output.debugDescription) on side \(side)") }
                if round > 0 { gets[side].append(run.seconds) }
            }
        }

        // 4. prefsd's own `Write` at 10,000 keys, without and with --dconf.
        let nativeRounds = quick ? 100 : 300
        log("native Write at \(Self.bigKeys) keys, with and without --dconf: \(nativeRounds) rounds")
        let natives = [plainConnection, prefsdConnection]
        var nativeWrites = [[Double](), [Double]()]
        for round in 0...nativeRounds {
            for side in Self.order(round) {
                let seconds = try natives[side].timed(Calls.write(bigDomain, "w", Int64(round)))
                if round > 0 { nativeWrites[side].append(seconds) }
            }
        }

        let rows = DconfComparison(
            dconfWrite: (Figure(writes[0]), Figure(writes[1])), change: (Figure(changes[0]), Figure(changes[1])),
            gsettingsGet: (Figure(gets[0]), Figure(gets[1])), nativeWrite: (Figure(nativeWrites[0]), Figure(nativeWrites[1])),
            keys: Self.bigKeys)
        print(
            "Machine: \(Machine.description).  \nLoad: \(loadBefore) before, \(Machine.load) after (1/5/15-minute load averages).  \nRun: \(quick ? "`--quick`" : "full"); each service on its own private dbus-daemon, the two sides of a row taking turns round by round.\n"
        )
        print(rows.render())
    }

    /// The sides in the order they run in `round`: 0 (dconf-service, or prefsd without
    /// `--dconf`) first in even rounds, 1 first in odd ones.
    static func order(_ round: Int) -> [Int] {
        round % 2 == 0 ? [0, 1] : [1, 0]
    }

    /// Waits (at most 20 s) until `ca.desrt.dconf` answers a Ping on `connection`'s bus.
    static func waitForDconfName(_ connection: DBusConnection) throws {
        let deadline = now() + 20
        while (try? connection.callBlocking(Calls.ping(Calls.dconfName), timeout: .seconds(2))) == nil {
            guard now() < deadline else { throw BenchError("prefsd --dconf did not take ca.desrt.dconf within 20 s") }
            usleep(2000)
        }
    }

    /// A schema directory in `directory` holding the compiled test schema.
    static func compileSchema(in directory: URL) throws -> URL {
        let schemas = directory.appendingPathComponent("schemas")
        try FileManager.default.createDirectory(at: schemas, withIntermediateDirectories: true)
        let xml = """
            <schemalist>
              <schema id="\(schemaID)" path="\(schemaPath)">
                <key name="\(schemaKey)" type="i"><default>0</default></key>
              </schema>
            </schemalist>
            """
        try xml.write(to: schemas.appendingPathComponent("\(schemaID).gschema.xml"), atomically: true, encoding: .utf8)
        try GIOProgram.check(runCommand("glib-compile-schemas", [schemas.path]), "glib-compile-schemas")
        return schemas
    }
}
