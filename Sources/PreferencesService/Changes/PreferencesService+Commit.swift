import DBus
import Dconf
import Dispatch
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesStore
import Synchronization

/// The running state read and changed under the lock, and the one path every persistent
/// change takes: committed once, then told to every reader.
extension PreferencesService {
    /// The store, once loaded.
    func store() -> DomainStore {
        guard let store = state.withLock({ $0.store }) else {
            preconditionFailure("calls are dispatched only once the store is loaded")
        }
        return store
    }

    /// Reads from the running state.
    func read<Result: Sendable>(_ body: (DomainState) -> Result) -> Result {
        state.withLock { state in
            guard let domains = state.domains else { preconditionFailure("calls are dispatched only once the store is loaded") }
            return body(domains)
        }
    }

    /// Changes the running state; the call is answered with `answer` once the change is
    /// carried out, or with `otherwise` when `body` declines to change anything (once the
    /// batches in flight are durable).
    ///
    /// `application` is the sandboxed application making the change (`nil` for the host):
    /// its share of the limits is checked besides the global ones. `typing` says how its
    /// values meet the installed schemas.
    func change(
        as application: String?, typing: SchemaTyping, answer: [DBusValue], otherwise: [DBusValue],
        _ body: (inout DomainState) throws -> Effect?
    ) throws(PreferencesServiceError) -> Outcome {
        try acting(as: application, typing: typing) { domains, store in
            guard let effect = try body(&domains) else {
                // Declined, perhaps because of a change still on its way to disk: answer
                // once what is in flight is durable, so a Read after the answer sees it
                // (else a read-modify-write would read the old value and lose again).
                let pending = domains.batchesInFlight > 0
                return pending ? .effect(.unchanged(afterPending: true), store, answer: otherwise) : .answer(otherwise)
            }
            return .effect(effect, store, answer: answer)
        }
    }

    /// Runs `body` on the running state and the store, with `application` (`nil` for the
    /// host) as the one acting and its values meeting the schemas as `typing` says, under
    /// the lock; an error that is not a refusal becomes `InvalidArgs`.
    func acting<Result: Sendable>(
        as application: String?, typing: SchemaTyping = .asGiven, _ body: (inout DomainState, DomainStore) throws -> Result
    ) throws(PreferencesServiceError) -> Result {
        try waitUntilLoaded()
        do {
            return try state.withLock { state in
                guard state.domains != nil, let store = state.store else {
                    preconditionFailure("calls are dispatched only once the store is loaded")
                }
                if let application { state.domains!.followApplication(application) }
                state.domains!.actingApplication = application
                state.domains!.schemaTyping = typing
                defer {
                    state.domains!.actingApplication = nil
                    state.domains!.schemaTyping = .asGiven
                }
                return try body(&state.domains!, store)
            }
        } catch let error as PreferencesServiceError {
            throw error
        } catch {
            throw .invalidArguments("\(error)")
        }
    }

    /// Completes a change the state accepted (commits it, emits its signal), then answers
    /// the call with `body`.
    func complete(_ effect: Effect, store: DomainStore, for call: DBusMessage, answer body: [DBusValue], who: String) {
        switch effect {
        case .unchanged(afterPending: false):
            reply(to: call, body)
        case .unchanged(afterPending: true):
            store.commit([]) { [self] result in
                answer(call, body, after: result)
            }
        case .volatile(let change):
            emit(change, volatile: true)
            reply(to: call, body)
        case .persistent(let batch):
            let early = EarlySignal()
            commit([batch], store: store, who: who, origin: .local, early: early) { [self] result in
                answer(call, body, after: result)
            }
            // While the store's writer commits (its sync is most of a write's time), this
            // thread encodes the `Changed` the commit will most likely emit, so the writer
            // only sends it. Used only if the commit's change is exactly the one predicted.
            early.prepare { [self] in
                guard let change = state.withLock({ $0.domains?.predictedChange(batch) }) else { return nil }
                return (change, try? connection.encode(changedSignal(change, volatile: false)))
            }
        }
    }

    func answer(_ call: DBusMessage, _ body: [DBusValue], after result: Result<Void, StoreError>) {
        switch result {
        case .success:
            reply(to: call, body)
        case .failure(let error):
            logger.error("store write failed", metadata: ["error": "\(error)"])
            let refusal = PreferencesServiceError.storageFailed("the change was not saved: \(error)")
            reply(to: call, error: refusal.busErrorName, refusal.description)
        }
    }

    /// Where a committed change came from. Every change reaches `Changed` (or
    /// `VolatileChanged`), the snapshots and the door's subscribers; the origin decides
    /// whether a persistent one also goes to dconf's file and `Notify`, and whether it
    /// roams as this machine's.
    enum ChangeOrigin: Sendable, Equatable {
        /// prefsd's own interface, undo and restore: every reader.
        case local
        /// dconf's `Change`: its file is part of the commit and its front sends `Notify`.
        case dconf
        /// Another machine's change, applied from the roaming folder: not noted as this
        /// machine's (a pass that then read a later change of the key would take this one
        /// for this machine's and publish it over that later one).
        case roaming
        /// What an administrator's file changed of what readers see (a managed domain, a
        /// default, a lock): every reader, but not noted as this machine's change for the
        /// roaming folder, since nothing an administrator sets roams (a pass is scheduled,
        /// for what the new forced keys let through or hold back).
        case administrator
    }

    /// The one path of a persistent change: commits `batches` (with `also`, mutations that
    /// change no value a reader sees, such as GVariant types) as one change by `who`, puts
    /// the outcome in force (the GVariant types it records among them, for dconf's file),
    /// tells every reader of each change that changed something
    /// (``emit(_:volatile:origin:encoded:)``, with `early`'s signal when it predicted it),
    /// and then runs `completion` with the outcome.
    func commit(
        _ batches: [Batch], also: [StoreMutation] = [], store: DomainStore, who: String, origin: ChangeOrigin,
        early: EarlySignal? = nil, recorded: (@Sendable ([UInt64]) -> Void)? = nil,
        completion: @escaping @Sendable (Result<Void, StoreError>) -> Void
    ) {
        store.commit(batches.flatMap(\.mutations) + also, who: who, recorded: recorded) { [self] result in
            let changes = state.withLock { state -> [Change] in
                switch result {
                case .success: return batches.compactMap { state.domains?.committed($0) }
                case .failure:
                    for batch in batches { state.domains?.failed(batch) }
                    return []
                }
            }
            if case .success = result, let dconf {
                let types = Self.gvariantTypes(in: batches, also: also)
                if !types.isEmpty { dconf.setTypes(types) }
            }
            for change in changes where !change.isEmpty {
                emit(change, volatile: false, origin: origin, encoded: early?.take(for: change))
            }
            completion(result)
        }
    }

    /// The GVariant types the mutations of `batches` and `also` record, in order (none
    /// made for a change that records none).
    static func gvariantTypes(in batches: [Batch], also: [StoreMutation]) -> [(domain: DomainName, key: String, type: String?)] {
        var types: [(domain: DomainName, key: String, type: String?)] = []
        for batch in batches {
            for case .setGVariantType(let domain, let key, let type) in batch.mutations { types.append((domain, key, type)) }
        }
        for case .setGVariantType(let domain, let key, let type) in also { types.append((domain, key, type)) }
        return types
    }

    /// Tells the readers of `change`, committed (or, `volatile`, made in memory): `Changed`
    /// or `VolatileChanged`, its body bounded as the contract says (`encoded` is that signal
    /// encoded ahead, see ``EarlySignal``, if it was), the snapshots and the door's
    /// subscribers; for a persistent change, dconf's file and `Notify` and the roaming
    /// folder, as its `origin` says, and xfconf's `PropertyChanged` and `PropertyRemoved`
    /// when the domain is a channel's.
    func emit(_ change: Change, volatile: Bool, origin: ChangeOrigin = .local, encoded: EncodedMessage? = nil) {
        if !volatile, let coordinator = roaming.withLock({ $0 }) {
            switch origin {
            case .local, .dconf: coordinator.committed(change)
            case .administrator: coordinator.schedule()
            case .roaming: break
            }
        }
        if !volatile, origin != .dconf, let dconf {
            dconf.enqueue(DconfFront.Job(touched: [change.domain: Array(change.changed.keys) + change.removed]))
        }
        emitSignal(encoded?.message ?? changedSignal(change, volatile: volatile), encoded: encoded)
        if !volatile { emitXfconf(change) }
    }

    /// The `Changed` (or `VolatileChanged`) signal of `change`.
    func changedSignal(_ change: Change, volatile: Bool) -> DBusMessage {
        let member = volatile ? PreferencesBus.volatileChangedSignal : PreferencesBus.changedSignal
        return .signal(path: PreferencesBus.objectPath, interface: PreferencesBus.interface, member: member, body: change.signalBody())
    }
}
