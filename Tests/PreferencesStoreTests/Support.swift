import Dispatch
import Foundation
import GRDB
import Logging
import PreferencesModel
@_spi(Testing) import PreferencesStore
import Synchronization

/// A temporary directory of its own for one test, removed when the test ends.
final class TemporaryDirectory: Sendable {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory
            .appendingPathComponent("prefsd-store-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    /// The store directory inside it (not created yet).
    var store: URL { url.appendingPathComponent("prefsd", isDirectory: true) }

    deinit {
        try? FileManager.default.removeItem(at: url)
    }
}

/// Collects what a store logs.
final class LogRecorder: Sendable {
    let entries = Mutex<[(level: Logger.Level, message: String)]>([])

    var logger: Logger {
        Logger(label: "prefsd.store.tests") { _ in RecordingLogHandler(recorder: self) }
    }

    var messages: [String] { entries.withLock { $0.map(\.message) } }
}

struct RecordingLogHandler: LogHandler {
    let recorder: LogRecorder
    var metadata: Logger.Metadata = [:]
    var metadataProvider: Logger.MetadataProvider?
    var logLevel: Logger.Level = .trace

    subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    func log(event: LogEvent) {
        recorder.entries.withLock { $0.append((event.level, event.message.description)) }
    }
}

extension DomainStore {
    /// Commits and waits for the completion.
    func commitAndWait(_ mutations: [StoreMutation]) -> Result<Void, StoreError> {
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, StoreError>?>(nil)
        commit(mutations) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        guard done.wait(timeout: .now() + 60) == .success, let result = outcome.withLock({ $0 }) else {
            return .failure(.writeFailed(reason: "the commit's completion did not come within 60 s"))
        }
        return result
    }
}

/// Reads one stored value through a connection of its own, as another process would.
func readFromFreshConnection(_ database: URL, domain: String, key: String) throws -> PropertyListValue? {
    var configuration = Configuration()
    configuration.readonly = true
    let queue = try DatabaseQueue(path: database.path, configuration: configuration)
    defer { try? queue.close() }
    let data = try queue.read { db in
        try Data.fetchOne(db, sql: "SELECT value FROM preference WHERE domain = ? AND key = ?", arguments: [domain, key])
    }
    return try data.map { try PropertyListValue(encoded: $0) }
}

/// File mode bits of `path`.
func mode(of path: String) throws -> Int {
    let attributes = try FileManager.default.attributesOfItem(atPath: path)
    return (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
}

func domain(_ name: String) -> DomainName {
    // Test names are known to be valid.
    try! DomainName(name)
}

/// One value of every property-list type, nested ones included.
let everyKindOfValue: [String: PropertyListValue] = [
    "string": .string("Grüße 🎛️"),
    "integer": .integer(.min),
    "real": .real(-0.0),
    "boolean": .boolean(true),
    "data": .data(Data([0, 1, 2, 255])),
    "date": .date(secondsSince1970: 1_700_000_000.5),
    "array": .array([.integer(1), .string("two"), .array([])]),
    "dictionary": .dictionary(["nested": .dictionary(["deep": .boolean(false)]), "empty": .dictionary([:])]),
]

/// Writes the store's database file in `directory` (made if missing) with `body`, through a
/// plain GRDB connection: a store as an older prefsd, or another program, left it.
func writeStoreDatabase(in directory: URL, _ body: (Database) throws -> Void) throws {
    try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
    let queue = try DatabaseQueue(path: directory.appendingPathComponent("store.sqlite").path)
    try queue.write(body)
    try queue.close()
}

/// The store's schema as prefsd 0.2 left it (migration v1 only), as SQL.
let storeSchemaV1 = """
    CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
    INSERT INTO grdb_migrations(identifier) VALUES ('v1');
    CREATE TABLE preference(domain TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
                            PRIMARY KEY(domain, key)) WITHOUT ROWID;
    """
