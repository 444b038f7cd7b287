import BenchmarkKit
import BusTestSupport
import DBus
import Foundation
import Logging
import Synchronization
import Testing

@_spi(Testing) @testable import PreferencesStore

/// The store floor compiled from its source and run on a private bus: it keeps what it is
/// written in SQLite as prefsd's store does (the same tables and statements), answers
/// `Write` after the commit with `Changed` and the reply, and ends with its standard input.
@Suite("Store floor service", .serialized)
struct StoreFloorServiceTests {
    static let path = "/io/github/prefsd/Preferences1"
    static let interface = "io.github.prefsd.Preferences1"

    /// The SQL of the preferences' and the journal's tables in a database, as SQLite keeps it.
    static let tablesQuery = "SELECT sql FROM sqlite_master WHERE name IN ('preference', 'history') ORDER BY name"

    static func compile(in directory: URL) throws -> String {
        let sql = try StoreSQL.current()
        return try compileCProgram(
            StoreFloorService.source(tables: sql.tables, statements: sql.statements),
            named: StoreFloorService.executableName, in: directory,
            library: StoreFloorService.libraries, package: StoreFloorService.packages)
    }

    static func start(_ executable: String, bus: PrivateBus, database: URL) throws -> RunningService {
        try RunningService(
            executable, StoreFloorService.arguments(address: bus.address, path: path, interface: interface, database: database.path),
            log: database.appendingPathExtension("log"))
    }

    static func call(_ member: String, _ body: [DBusValue]) -> DBusMessage {
        .methodCall(destination: StoreFloorService.busName, path: path, interface: interface, member: member, body: body)
    }

    /// `sqlite3 DATABASE QUERY`'s output, failing the test when sqlite3 does.
    static func query(_ database: URL, _ sql: String) throws -> String {
        let result = try runCommand("sqlite3", [database.path, sql])
        try #require(result.status == 0, "sqlite3 failed (install sqlite3: scripts/install-dependencies): \(result.stderr)")
        return result.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    @Test func storesEachWriteAsPrefsdsStoreDoesThenSignalsAndAnswers() async throws {
        let bus = try PrivateBus()
        defer { bus.stop() }
        let executable = try Self.compile(in: bus.directory)
        let database = bus.directory.appendingPathComponent("floor.sqlite")
        let service = try Self.start(executable, bus: bus, database: database)
        try #require(service.firstLine() == "ready", "the service did not start: \(service.standardError)")

        let client = try DBusConnection.connect(address: bus.address)
        defer { client.close() }
        let signals = try await ChangedSignals.listen(client, interface: Self.interface)

        #expect(try client.callBlocking(Self.call("Read", [.string("bench.big"), .string("probe")])).body == [.variant(.int64(1))])

        // Two writes of one key: each answered after its commit, each with its Changed.
        #expect(try client.callBlocking(Self.call("Write", [.string("d"), .string("k"), .variant(.int64(7))])).body.isEmpty)
        #expect(try client.callBlocking(Self.call("Write", [.string("d"), .string("k"), .variant(.string("two"))])).body.isEmpty)
        #expect(await eventually { signals.all.count == 2 }, "not two Changed signals")
        let changed = signals.all
        #expect(
            changed.first?.body == [
                .string("d"), .array(element: "{sv}", [.dictEntry(.string("k"), .variant(.int64(7)))]), .array(element: "s", []), .array(element: "s", []),
            ])
        #expect(changed.last?.body.dropFirst().first == .array(element: "{sv}", [.dictEntry(.string("k"), .variant(.string("two")))]))

        // The value and the journal as prefsd's store keeps them: the last value, and one row
        // per change with the value before it (7 as type 'x' and its 8 little-endian bytes), and
        // who made it: the caller's unique name.
        #expect(try Self.query(database, "PRAGMA journal_mode") == "wal")
        let tables = try Self.query(database, Self.tablesQuery)
        #expect(tables == (try StoreSQL.current().tables.joined(separator: "\n")), "not prefsd's store's tables")
        let wal = try FileManager.default.attributesOfItem(atPath: database.path + "-wal")[.size] as? Int
        #expect(wal == FloorService.walBytes, "the WAL is not full-size")
        #expect(try Self.query(database, "SELECT domain, key, hex(value) FROM preference") == "d|k|" + "73" + "74776F".uppercased())
        let sender = client.uniqueName
        #expect(
            try Self.query(database, "SELECT sequence, key, domain, who, stored, hex(value), hex(previous) FROM history ORDER BY sequence")
                == "1|k|d|\(sender)|1|780700000000000000|\n2|k|d|\(sender)|1|7374776F|780700000000000000")

        // A container value and other members are refused, and nothing is stored for them.
        let refusals: [(String, [DBusValue], String)] = [
            ("Write", [.string("d"), .string("k"), .variant(.array(element: "i", [.int32(1)]))], "org.freedesktop.DBus.Error.InvalidArgs"),
            ("Remove", [.string("d"), .string("k")], "org.freedesktop.DBus.Error.UnknownMethod"),
        ]
        for (member, body, expected) in refusals {
            let error = #expect(throws: DBusError.self) { try client.callBlocking(Self.call(member, body)) }
            #expect(error?.name == expected, "\(member)")
        }
        #expect(try Self.query(database, "SELECT count(*) FROM history") == "2")

        try service.input.fileHandleForWriting.close()
        #expect(waitForExit(of: service.process, timeout: .seconds(10)) == 0)
    }

    /// The SQL the store floor is made with is prefsd's store's: the tables a store on disk
    /// has, the statements its writer runs.
    @Test func itsSQLIsPrefsdStores() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-floor-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: directory) }
        let store = try DomainStore(directory: directory, logger: Logger(label: "test"))
        store.close()
        let sql = try StoreSQL.current()
        let tables = try Self.query(store.databaseURL, Self.tablesQuery)
        #expect(tables == sql.tables.joined(separator: "\n"))
        #expect(sql.tables.count == 2 && sql.tables.allSatisfy { $0.hasPrefix("CREATE TABLE") })
        #expect(sql.statements.begin == StoreSchema.begin)
        #expect(sql.statements.previous == StoreSchema.selectValue)
        #expect(sql.statements.upsert == StoreSchema.upsert)
        #expect(sql.statements.journal == StoreSchema.insertHistory)
        #expect(sql.statements.commit == StoreSchema.commit)
    }
}
