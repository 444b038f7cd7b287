import DBus
import PreferencesModel
import PreferencesProtocol
import PreferencesStore

/// The `who` of changes that come from prefsd itself rather than from a caller.
enum HistoryOrigin {
    /// A change an administrator's managed file made to what readers see.
    static let managed = "managed"
    /// A change made by `RevertTo` or `RevertKeyTo`.
    static let restore = "restore"
    /// The values of a database dconf-service wrote, taken in when prefsd starts serving dconf.
    static let dconfService = "dconf-service"
}

/// A `History` call: the entries of `domain` (every domain: `nil`), of `key` only when
/// given, after sequence `after`, at most `limit` (0: as many as a reply carries); or a
/// `RecentHistory` call (`newest`): the newest `limit` entries.
struct HistoryRequest: Sendable {
    var domain: DomainName?
    var key: String?
    var after: UInt64
    var limit: UInt32
    var newest = false
}

/// A `RevertTo` or `RevertKeyTo` call: put `domain` (or only `key`) back as it was right
/// after change `sequence`.
struct RevertRequest: Sendable {
    var domain: DomainName
    var key: String?
    var sequence: UInt64
}

/// `History`, `RevertTo` and `RevertKeyTo`: the change journal on the bus.
extension PreferencesService {
    /// Most entries one `History` reply carries (a `limit` of 0 asks for this many).
    static let historyReplyEntries: UInt32 = 10_000

    /// `History`: the journal's entries of a domain (or one key) after `after`, oldest
    /// first, at most `limit` (0: ``historyReplyEntries``) and within half the reply bound;
    /// a caller reads on with `after` set to the last sequence it got. `RecentHistory`:
    /// the newest `limit` entries, oldest first, within the same bounds.
    ///
    /// The read runs on the store's history reader, never on the connection's queue, once
    /// the changes accepted before the call are durable (so the answer has the caller's
    /// own earlier writes, and comes after their answers); the call is answered from there.
    func history(_ request: HistoryRequest, store: DomainStore, for call: DBusMessage) {
        let count = request.limit == 0 ? Self.historyReplyEntries : min(request.limit, Self.historyReplyEntries)
        store.readHistory(
            domain: request.domain, key: request.key, after: request.after, limit: Int(count),
            maxBytes: configuration.limits.replyBytes / 2, newest: request.newest
        ) { [self] result in
            switch result {
            case .success(let entries):
                reply(to: call, [.array(element: HistoryEntry.dbusSignature, entries.map(\.dbusValue))])
            case .failure(let error):
                let refusal = PreferencesServiceError.storageFailed(
                    "the history of \(request.domain?.rawValue ?? "every domain") could not be read: \(error)")
                reply(to: call, error: refusal.busErrorName, refusal.description)
            }
        }
    }

    /// `RevertTo` / `RevertKeyTo`: once every change in flight is durable, reads what the
    /// domain's keys were right after the change, and commits putting them back as one
    /// change made by `restore`, leaving forced keys alone.
    func revert(_ request: RevertRequest, store: DomainStore, for call: DBusMessage, as caller: CallerIdentity) {
        let application: String? = if case .application(let id) = caller { id } else { nil }
        store.commit([]) { [self] result in
            do {
                if case .failure(let error) = result { throw PreferencesServiceError.storageFailed("the change was not saved: \(error)") }
                let targets: [String: PropertyListValue?]
                do {
                    guard let found = try store.revertTargets(domain: request.domain, key: request.key, to: request.sequence) else {
                        throw PreferencesServiceError.notFound(
                            "the history of \(request.domain) no longer reaches back to change \(request.sequence): older changes were dropped to keep it within its bounds (prefsd --history-entries, --history-size)"
                        )
                    }
                    targets = found
                } catch let error as StoreError {
                    throw PreferencesServiceError.storageFailed("the history of \(request.domain) could not be read: \(error)")
                }
                // What was stored then is put back even where a schema no longer takes it.
                let outcome = try change(as: application, typing: .fitted(schemas.current), answer: [], otherwise: []) { state in
                    try state.revert(request.domain, key: request.key, to: targets)
                }
                switch outcome {
                case .answer(let body): reply(to: call, body)
                case .effect(let effect, let store, let body):
                    complete(effect, store: store, for: call, answer: body, who: HistoryOrigin.restore)
                case .encodedAnswer, .revert, .history: break
                }
            } catch let error as PreferencesServiceError {
                reply(to: call, error: error.busErrorName, error.description)
            } catch {
                reply(to: call, error: PreferencesServiceError.storageFailed("\(error)").busErrorName, "\(error)")
            }
        }
    }
}

extension DomainState {
    /// Puts keys of `domain` to `targets` (`nil`: absent) as one change. Reverting the whole
    /// domain leaves the keys an administrator forces alone; reverting one `key` that is
    /// forced is refused, as writing it is.
    mutating func revert(_ domain: DomainName, key: String?, to targets: [String: PropertyListValue?]) throws(PreferencesServiceError) -> Effect {
        if let key { try refuseForced(domain, set: [:], remove: [key]) }
        var set: [String: PropertyListValue] = [:]
        var remove: [String] = []
        for (key, target) in targets where !isForced(domain: domain, key: key) {
            if let target { set[key] = target } else { remove.append(key) }
        }
        return try apply(domain: domain, set: set, remove: remove.sorted())
    }
}
