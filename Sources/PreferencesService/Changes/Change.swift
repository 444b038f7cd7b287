import PreferencesModel

/// One committed change to one domain: the payload of a `Changed` signal.
struct Change: Sendable, Equatable {
    /// The domain that changed.
    var domain: DomainName
    /// Keys whose value changed, with their new values.
    var changed: [String: PropertyListValue] = [:]
    /// Keys that were removed.
    var removed: [String] = []

    /// Whether the change carries anything.
    var isEmpty: Bool { changed.isEmpty && removed.isEmpty }
}

/// What the service must do after the state accepted a call.
enum Effect: Sendable {
    /// Nothing changed. Answer now, or once the batches already in flight are durable
    /// when `afterPending` is set (the caller must not see an answer before earlier
    /// writes it depends on).
    case unchanged(afterPending: Bool)
    /// A volatile domain changed in memory: emit the change and answer.
    case volatile(Change)
    /// A persistent change is staged as batch `sequence`: commit its mutations, then
    /// report the outcome to the state.
    case persistent(Batch)
}
