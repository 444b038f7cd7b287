import Dispatch
import Logging
import PreferencesModel
import PreferencesStore
import Synchronization

/// One change a take-in at start brings into the store (what another daemon left: dconf's
/// database, xfconf's channel files): a value with the GVariant type to keep beside it
/// (`nil`: its natural one), or a removal (`value` `nil`).
struct TakenChange: Sendable {
    /// How the log names it when the gate refuses it (a dconf key, a channel's property).
    var name: String
    var domain: DomainName
    var key: String
    var value: PropertyListValue?
    var type: String?
}

extension PreferencesService {
    /// Takes `changes` into the running state (in force, not answering calls yet) and
    /// `store`: each passes the gate every change passes, key by key (the store's limits on
    /// values, forced and locked keys, quotas), and those it lets through are committed as
    /// one change by `who` through the one commit path, waited for. Answers each change the
    /// gate refused (by name, with why), or the store's error.
    func takeIn(_ changes: [TakenChange], who: String, origin: ChangeOrigin, store: DomainStore) -> Result<[String: String], StoreError> {
        let limits = configuration.limits
        let (batches, types, refused) = state.withLock { state in
            var batches: [Batch] = []
            var types: [StoreMutation] = []
            var refused: [String: String] = [:]
            for change in changes {
                do {
                    let effect: Effect
                    if let value = change.value {
                        try limits.check(value, subject: "its value")
                        effect = try state.domains!.write(domain: change.domain, key: change.key, value: value)
                    } else {
                        effect = try state.domains!.remove(domain: change.domain, key: change.key)
                    }
                    if case .persistent(let batch) = effect { batches.append(batch) }
                    types.append(.setGVariantType(change.domain, key: change.key, type: change.type))
                } catch {
                    refused[change.name] = "\(error)"
                }
            }
            return (batches, types, refused)
        }
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<Result<Void, StoreError>?>(nil)
        commit(batches, also: types, store: store, who: who, origin: origin) { result in
            outcome.withLock { $0 = result }
            done.signal()
        }
        done.wait()
        if case .failure(let error)? = outcome.withLock({ $0 }) { return .failure(error) }
        return .success(refused)
    }

    /// The most left-out keys a log line names.
    static let namedLeftOutKeys = 20

    /// Logs `message` naming the first of `leftOut` (name → why) in `key` of `metadata`.
    func logLeftOut(_ leftOut: [String: String], _ message: Logger.Message, naming key: String, metadata: Logger.Metadata) {
        guard !leftOut.isEmpty else { return }
        let named = leftOut.sorted { $0.key < $1.key }.prefix(Self.namedLeftOutKeys).map { "\($0.key): \($0.value)" }
        var metadata = metadata
        metadata["leftOut"] = "\(leftOut.count)"
        metadata[key] = "\(named.joined(separator: "; "))\(leftOut.count > named.count ? "; …" : "")"
        logger.warning(message, metadata: metadata)
    }
}
