import PreferencesModel
import PreferencesStore

/// A persistent change staged in memory and on its way to the store.
struct Batch: Sendable {
    /// Orders batches; the newest staged write of a key carries the highest number.
    var sequence: UInt64
    /// The one domain the batch changes.
    var domain: DomainName
    /// What the store must write.
    var mutations: [StoreMutation]
}
