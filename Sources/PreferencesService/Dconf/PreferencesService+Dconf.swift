import DBus
import Dconf
import PreferencesModel
import PreferencesProtocol
import PreferencesStore

/// dconf's protocol (`prefsd --dconf`): the writer `ca.desrt.dconf.Writer` of the user
/// database and `ca.desrt.dconf.ServiceInfo`, served from the same store and state as
/// prefsd's own interface. A `Change` is one batch of the store, durable before it is
/// answered, and answered once dconf's database file holds it.
///
/// In prefsd they are served on a connection of their own, the one owning `ca.desrt.dconf`,
/// which serves nothing else and sends nothing but `Notify`: a sandboxed application given
/// dconf's name reaches that connection alone, never prefsd's own interface or its
/// `Changed` signals, and a caller of it that left before prefsd could tell who it was is
/// refused, never taken for the host.
extension PreferencesService: DconfFrontService {
    /// Exports the writer and service-information objects, when prefsd serves dconf.
    func registerDconf() throws(DBusError) {
        guard let dconf else { return }
        let served = dconfServingConnection
        if let dconfConnection { dconfConnection.setMaximumMessageSize(configuration.limits.maximumMessageBytes) }
        for path in [DconfBus.writerPath(database: dconf.files.name), DconfBus.serviceInfoPath] {
            try served.registerObject(path: path) { [self] call in receive(call) }
        }
    }

    /// The connection serving dconf's objects.
    var dconfServingConnection: any ServiceConnection { dconfConnection ?? connection }

    /// Whether `call` came in at dconf's name (or the unique name of the connection owning it).
    static func isForDconf(_ call: DBusMessage, dconfConnection: (any ServiceConnection)?) -> Bool {
        call.destination == DconfBus.busName || (dconfConnection.map { call.destination == $0.uniqueName } ?? false)
    }

    /// Stops serving dconf's calls: from now on they are refused (none is acknowledged that
    /// the next owner of dconf's name might not serve). The changes accepted before go on
    /// to the store and dconf's file.
    func closeDconf() {
        guard dconf != nil else { return }
        state.withLock { $0.dconfClosed = true }
    }

    /// Whether `call` is for one of dconf's objects.
    func isDconfCall(_ call: DBusMessage) -> Bool {
        guard let dconf, let path = call.path else { return false }
        return path == DconfBus.writerPath(database: dconf.files.name) || path == DconfBus.serviceInfoPath
    }

    /// Answers a call to one of dconf's objects.
    func handleDconfCall(_ call: DBusMessage, as caller: CallerIdentity) {
        guard let dconf else { return }
        let writer = call.path != DconfBus.serviceInfoPath
        let interface = writer ? DconfBus.writerInterface : DconfBus.serviceInfoInterface
        let standard = StandardInterfaces(
            path: call.path ?? "", introspectionXML: writer ? DconfBus.writerIntrospectionXML : DconfBus.serviceInfoIntrospectionXML,
            interfaceProperties: [interface: [:]])
        if let answer = standard.answer(call) {
            guard !call.noReplyExpected else { return }
            return send(answer, over: connection(answering: call))
        }
        if let refusal = dconf.refusal {
            return reply(to: call, error: StandardErrorName.failed, DconfBus.refusalPrefix + refusal)
        }
        if state.withLock({ $0.dconfClosed }) {
            return reply(to: call, error: StandardErrorName.failed, DconfBus.refusalPrefix + DconfBus.stoppingReason)
        }
        guard call.interface == nil || call.interface == interface else {
            return reply(to: call, error: StandardErrorName.unknownInterface, "the object \(call.path ?? "") has no interface \(call.interface ?? "")")
        }
        switch (writer, call.member, call.signature) {
        case (true, DconfBus.initMethod?, ""):
            // The file is written at start and after every change: answered once the changes
            // before this call are in it.
            let refuse: @Sendable (String) -> Void = { [self] reason in
                let refusal = PreferencesServiceError.storageFailed("dconf's database file cannot be written: \(reason)")
                reply(to: call, error: refusal.busErrorName, refusal.description)
            }
            dconf.enqueue(DconfFront.Job(touched: [:], answer: { [self] in reply(to: call, []) }, refuse: refuse))
        case (true, DconfBus.changeMethod?, "ay"):
            guard case .bytes(let blob)? = call.body.first else {
                return reply(to: call, error: StandardErrorName.invalidArgs, "Change takes the serialised changeset as one array of bytes")
            }
            change(blob, for: call, as: caller)
        case (false, DconfBus.blameMethod?, ""):
            // Every program's changes, values included: for the host's callers only.
            guard case .host = caller else {
                let refusal = PreferencesServiceError.accessDenied("\(caller) may not read Blame: it tells every program's changes")
                return reply(to: call, error: refusal.busErrorName, refusal.description)
            }
            blame(for: call)
        case (_, let member?, _) where [DconfBus.initMethod, DconfBus.changeMethod, DconfBus.blameMethod].contains(member):
            reply(to: call, error: StandardErrorName.invalidArgs, "\(member) of \(interface) does not take arguments of type (\(call.signature))")
        default:
            reply(to: call, error: StandardErrorName.unknownMethod, "\(interface) has no method \(call.member ?? "(none)")")
        }
    }

    /// `Change`: the changeset's keys as prefsd stores them, one batch per domain, committed
    /// together; forced keys and other applications' domains refused, the whole change then.
    func change(_ blob: [UInt8], for call: DBusMessage, as caller: CallerIdentity) {
        guard let dconf else { return }
        let tag = dconf.nextTag(uniqueName: dconfServingConnection.uniqueName)
        let request: DconfRequest
        do {
            request = try DconfRequest(
                serialised: blob, limits: configuration.limits, schemas: schemas.current, caller: caller,
                storedKeys: {
                    read { state in Set(state.committed.keys).union(state.staged.keys).map { ($0, Array(state.projectedEntries(domain: $0).keys)) } }
                })
        } catch {
            return reply(to: call, error: error.busErrorName, error.description)
        }
        // dconf's file is part of the commit: written aside first, renamed in once the store
        // has committed; a file that cannot be written refuses the change.
        let aside: DconfAside?
        do {
            aside = try prepareFile(for: request, dconf: dconf)
        } catch {
            let refusal = PreferencesServiceError.storageFailed("the change was not made: dconf's database file cannot be written: \(error)")
            return reply(to: call, error: refusal.busErrorName, refusal.description)
        }
        let application: String? = if case .application(let id) = caller { id } else { nil }
        let staged: (batches: [Batch], store: DomainStore)
        do {
            staged = try stage(request, as: application)
        } catch {
            dconf.discard(aside)
            return reply(to: call, error: error.busErrorName, error.description)
        }
        let typeMutations = request.types.map { StoreMutation.setGVariantType($0.domain, key: $0.key, type: $0.type) }
        let job = DconfFront.Job(
            touched: request.touched, directories: request.directories, tag: tag,
            answer: { [self] in reply(to: call, [.string(tag)]) }, aside: aside)
        let maker = DconfBlame.Call(
            sender: call.sender ?? "", processID: call.sender.flatMap(gate.processID(of:)), objectPath: call.path ?? "",
            method: DconfBus.changeMethod)
        let recorded: @Sendable ([UInt64]) -> Void = { sequences in dconf.recordCall(maker, sequences: sequences) }
        commit(
            staged.batches, also: typeMutations, store: staged.store, who: gate.who(call, as: caller), origin: .dconf, recorded: recorded
        ) { [self] result in
            switch result {
            case .success:
                dconf.enqueue(job)
            case .failure:
                dconf.discard(aside)
                answer(call, [], after: result)
            }
        }
    }

    /// dconf's file as it will be once `request` is committed, written aside (see
    /// ``DconfFront/prepare(_:)``). A change that only resets keys may use the store's
    /// reserve, as removals from the store do: on a full disk, the reserve is released for
    /// the file (written again without the keys) and it is tried again.
    func prepareFile(for request: DconfRequest, dconf: DconfFront) throws(DconfError) -> DconfAside? {
        let values = request.fileValues(leavingOut: dconf.keepsOut)
        do {
            return try dconf.prepare(values)
        } catch  where error.isLackOfRoom && request.onlyRemoves {
            guard let store = state.withLock({ $0.store }), store.releaseReserve() else { throw error }
            return try dconf.prepare(values)
        }
    }

    /// Stages every domain's part of `request`; if one is refused, the parts staged before
    /// it are dropped again and nothing is changed.
    func stage(_ request: DconfRequest, as application: String?) throws(PreferencesServiceError) -> (batches: [Batch], store: DomainStore) {
        try acting(as: application) { domains, store in
            var batches: [Batch] = []
            do {
                for part in request.parts {
                    if case .persistent(let batch) = try domains.apply(domain: part.domain, set: part.set, remove: part.remove) {
                        batches.append(batch)
                    }
                }
            } catch {
                for batch in batches { domains.failed(batch) }
                throw error
            }
            return (batches, store)
        }
    }

    /// `Blame`: the newest changes of dconf's keys in the history (looked for among its
    /// newest ``blameEntries`` entries), read once the changes accepted before the call
    /// are durable, on the store's history reader.
    func blame(for call: DBusMessage) {
        guard let dconf else { return }
        store().readRecentHistory(limit: Self.blameEntries, maxBytes: configuration.limits.replyBytes / 2) { [self] result in
            switch result {
            case .success(let (entries, oldestCut)):
                let blame = DconfBlame(entries: entries, oldestCut: oldestCut, type: dconf.type(domain:key:), calls: dconf.calls)
                reply(to: call, [.string(blame.text)])
            case .failure(let error):
                let refusal = PreferencesServiceError.storageFailed("the history could not be read for Blame: \(error)")
                reply(to: call, error: refusal.busErrorName, refusal.description)
            }
        }
    }

    /// The most history entries `Blame` reads.
    static let blameEntries = 1_024

    // MARK: DconfFrontService

    func storedValues(domain: DomainName, keys: [String]) -> [String: PropertyListValue?] {
        state.withLock { state in
            let entries = state.domains?.committed[domain]
            var values: [String: PropertyListValue?] = [:]
            for key in keys { values[key] = .some(entries?[key]) }
            return values
        }
    }

    /// Sends dconf's `Notify` from the connection owning dconf's name, unless it is too large
    /// for the bus (logged instead).
    func notify(_ notification: DconfNotification, tag: String) {
        guard let dconf else { return }
        let signal = DBusMessage.signal(
            path: DconfBus.writerPath(database: dconf.files.name), interface: DconfBus.writerInterface, member: DconfBus.notifySignal,
            body: [.string(notification.prefix), .stringArray(notification.changes), .string(tag)])
        guard fitsOnBus(signal) else { return }
        send(signal, over: dconfServingConnection)
    }
}
