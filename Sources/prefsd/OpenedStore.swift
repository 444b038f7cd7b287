import Foundation
import Logging
import PreferencesService
import PreferencesStore

/// The store prefsd serves, opened and checked, and the lock that makes it this prefsd's.
struct OpenedStore: Sendable {
    let lock: StoreLock
    let store: DomainStore

    /// A store being opened on a thread of its own.
    typealias Opening = Task<Result<OpenedStore, StoreError>, Never>

    /// Takes the store's lock (waiting for a prefsd that is shutting down), then opens the
    /// store.
    init(configuration: ServiceConfiguration, logger: Logger) throws(StoreError) {
        try self.init(lock: StoreLock(directory: configuration.storeDirectory), configuration: configuration, logger: logger)
    }

    private init(lock: StoreLock, configuration: ServiceConfiguration, logger: Logger) throws(StoreError) {
        self.lock = lock
        store = try DomainStore(directory: configuration.storeDirectory, logger: logger, historyBounds: configuration.historyBounds)
    }

    /// Opens the store on a thread of its own while the caller sets up the bus, when its
    /// lock is free at once; `nil` when another prefsd holds it (the caller opens it once it
    /// has the name, which makes a prefsd it replaces let go).
    static func openingBeside(configuration: ServiceConfiguration, logger: Logger) -> Opening? {
        guard let lock = try? StoreLock(directory: configuration.storeDirectory, timeout: .zero) else { return nil }
        return Task.detached {
            await withCheckedContinuation { continuation in
                Thread.detachNewThread {
                    continuation.resume(
                        returning: Result { () throws(StoreError) in
                            try OpenedStore(lock: lock, configuration: configuration, logger: logger)
                        })
                }
            }
        }
    }
}

extension Task where Success == Result<OpenedStore, StoreError>, Failure == Never {
    /// Closes the store once opened, for a prefsd that does not go on to serve it.
    func close() async {
        if case .success(let opened) = await value { opened.store.close() }
    }
}
