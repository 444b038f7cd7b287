import GRDB

extension StoreFiles {
    /// A read-only connection to the database of its own, for work that runs beside the
    /// main connection's: WAL lets readers and the writer run at once. `cacheKiB` bounds its
    /// page cache, for a pass that reads every page once.
    func readOnlyConnection(label: String, cacheKiB: Int? = nil) throws -> DatabaseQueue {
        var configuration = Configuration()
        configuration.label = label
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        if let cacheKiB {
            configuration.prepareDatabase { db in try db.execute(sql: "PRAGMA cache_size = -\(cacheKiB)") }
        }
        return try DatabaseQueue(path: databasePath, configuration: configuration)
    }
}
