import DBus
import PreferencesModel
import PreferencesStore
import Xfconf

/// xfconf's protocol (`prefsd --xfconf`): `org.xfce.Xfconf` at `/org/xfce/Xfconf`, as
/// xfconfd 4.18 serves it, over the same store and state as prefsd's own interface. Channel
/// `C` is the domain `xfconf.C`, property `/a/b` its key `a/b`; a change is one batch of the
/// store, answered once durable, and goes through the one commit path (history, undo,
/// roaming, `Changed`), which sends `PropertyChanged` and `PropertyRemoved` for every change
/// to a channel, whatever made it.
///
/// Served on a connection of its own, the one owning `org.xfce.Xfconf`, which serves nothing
/// else: a caller there that prefsd cannot identify (it left first) is refused, never taken
/// for the host, and a sandboxed application is refused too, since no channel is an
/// application's own.
extension PreferencesService {
    /// Exports xfconf's object, when prefsd serves xfconf.
    func registerXfconf() throws(DBusError) {
        guard xfconf != nil else { return }
        if let xfconfConnection { xfconfConnection.setMaximumMessageSize(configuration.limits.maximumMessageBytes) }
        try xfconfServingConnection.registerObject(path: XfconfBus.objectPath) { [self] call in receive(call) }
    }

    /// The connection serving xfconf's object.
    var xfconfServingConnection: any ServiceConnection { xfconfConnection ?? connection }

    /// Whether `call` came in at xfconf's name (or the unique name of the connection owning it).
    static func isForXfconf(_ call: DBusMessage, xfconfConnection: (any ServiceConnection)?) -> Bool {
        call.destination == XfconfBus.busName || (xfconfConnection.map { call.destination == $0.uniqueName } ?? false)
    }

    /// Whether `call` is for xfconf's object.
    func isXfconfCall(_ call: DBusMessage) -> Bool {
        xfconf != nil && call.path == XfconfBus.objectPath
    }

    /// Answers a call to xfconf's object.
    func handleXfconfCall(_ call: DBusMessage, as caller: CallerIdentity) {
        guard let xfconf else { return }
        let standard = StandardInterfaces(
            path: XfconfBus.objectPath, introspectionXML: XfconfBus.introspectionXML, interfaceProperties: [XfconfBus.interface: [:]])
        if let answer = standard.answer(call) {
            guard !call.noReplyExpected else { return }
            return send(answer, over: connection(answering: call))
        }
        guard call.interface == nil || call.interface == XfconfBus.interface else {
            return reply(to: call, error: StandardErrorName.unknownInterface, "the object \(XfconfBus.objectPath) has no interface \(call.interface ?? "")")
        }
        guard let member = call.member, let method = XfconfBus.Method(rawValue: member) else {
            return reply(to: call, error: StandardErrorName.unknownMethod, "\(XfconfBus.interface) has no method \(call.member ?? "(none)")")
        }
        guard call.hasSignature(method.inputSignature) else {
            return reply(
                to: call, error: StandardErrorName.invalidArgs, "\(member) takes arguments of type (\(method.inputSignature)), not (\(call.signature))")
        }
        do {
            try admitXfconf(caller)
            xfconf.start { [self] in loadXfconfTypes() }
            try performXfconf(method, call, as: caller)
        } catch {
            reply(to: call, error: error.name.busName, error.message)
        }
    }

    /// Refuses every caller but the host's: no channel is a sandboxed application's own
    /// (`xfconf.` is reserved), and a caller prefsd cannot identify gets nothing.
    func admitXfconf(_ caller: CallerIdentity) throws(XfconfRefusal) {
        switch caller {
        case .host:
            return
        case .application(let id):
            throw XfconfRefusal(
                .permissionDenied,
                "the sandboxed application \(id) may not use xfconf's channels: they configure the desktop for every program, and none is an application's own; change them from the host (xfconf-query, the Settings Manager)"
            )
        case .unidentified(let reason):
            throw XfconfRefusal(.permissionDenied, "prefsd cannot tell who is calling, so it answers nothing: \(reason)")
        }
    }

    /// The GVariant types the store keeps for the channels' keys (none when it cannot read them).
    func loadXfconfTypes() -> [DomainName: [String: String]] {
        guard let store = state.withLock({ $0.store }) else { return [:] }
        do {
            return try store.loadGVariantTypes()
        } catch {
            logger.error("the types of xfconf's properties could not be read; values are given in their stored shape", metadata: ["error": "\(error)"])
            return [:]
        }
    }

    func performXfconf(_ method: XfconfBus.Method, _ call: DBusMessage, as caller: CallerIdentity) throws(XfconfRefusal) {
        let body = call.body
        let first = body.first?.stringValue ?? "", second = body.count > 1 ? body[1].stringValue ?? "" : ""
        switch method {
        case .setProperty:
            guard case .variant(let given)? = body.last else { return }
            let value = XfconfValue(bus: given)
            // xfconfd's backend asserts these first: `InternalError`, before the names are read.
            try XfconfNames.requireNonEmpty(channel: first, property: second)
            guard let value else {
                throw XfconfRefusal(
                    .internalError,
                    "xfconf cannot carry a value of type \(XfconfValue.typeText(of: given)): a property holds one of b i u x t d s y n q, or an array of them (av)"
                )
            }
            let (channel, property) = (try XfconfNames.channel(first), try XfconfNames.property(second))
            try setXfconf(value, channel: channel, property: property, for: call, as: caller)
        case .getProperty:
            try XfconfNames.requireNonEmpty(channel: first, property: second)
            let (channel, property) = (try XfconfNames.channel(first), try XfconfNames.property(second))
            guard let value = try xfconfValue(channel: channel, property: property) else {
                throw .propertyNotFound(property.path, channel: channel.name)
            }
            reply(to: call, [.variant(value.busValue)])
        case .propertyExists:
            try XfconfNames.requireNonEmpty(channel: first, property: second)
            let (channel, property) = (try XfconfNames.channel(first), try XfconfNames.property(second))
            reply(to: call, [.boolean(try xfconfValue(channel: channel, property: property) != nil)])
        case .getAllProperties:
            try XfconfNames.requireNonEmpty(channel: first, property: nil)
            let channel = try XfconfNames.channel(first)
            let base = XfconfNames.isRoot(second) ? nil : try XfconfNames.property(second)
            reply(to: call, [try xfconfProperties(channel: channel, under: base)])
        case .resetProperty:
            guard case .boolean(let recursive)? = body.last else { return }
            try XfconfNames.requireNonEmpty(channel: first, property: second)
            let channel = try XfconfNames.channel(first)
            if XfconfNames.isRoot(second), !recursive {
                throw XfconfRefusal(.invalidProperty, "The property name can only be empty or \"/\" if a recursive reset was specified")
            }
            let property = XfconfNames.isRoot(second) ? nil : try XfconfNames.property(second)
            try resetXfconf(channel: channel, property: property, recursive: recursive, for: call, as: caller)
        case .listChannels:
            reply(to: call, [.stringArray(try xfconfChannels().map(\.name))])
        case .isPropertyLocked:
            let (channel, property) = (try XfconfNames.channel(first), try XfconfNames.property(second))
            try loadForXfconf([channel.domain])
            reply(to: call, [.boolean(read { $0.isForced(domain: channel.domain, key: property.key) })])
        }
    }

    // MARK: Reading

    /// Waits until `domains` (every domain, when `nil`) are loaded.
    func loadForXfconf(_ domains: [DomainName]?) throws(XfconfRefusal) {
        do {
            if let domains { try ensureLoaded(domains) } else { try waitUntilLoaded() }
        } catch {
            throw XfconfRefusal(.readFailure, error.message)
        }
    }

    /// The value a reader of `property` sees (once the changes accepted are durable: see
    /// `DomainState+Xfconf.swift`), as xfconf carries it: `nil` when it has none, or holds one
    /// xfconf cannot carry (written through prefsd's own interface).
    func xfconfValue(channel: XfconfChannel, property: XfconfProperty) throws(XfconfRefusal) -> XfconfValue? {
        try loadForXfconf([channel.domain])
        let (stored, administrators) = read {
            ($0.projectedValue(domain: channel.domain, key: property.key), $0.administrator.xfconfTypes[channel.domain]?[property.key])
        }
        guard let stored else { return nil }
        return XfconfValue(storedValue: stored, type: xfconf?.type(domain: channel.domain, key: property.key) ?? administrators)
    }

    /// `GetAllProperties`: every property of `channel` at or below `base` (all, when `nil`)
    /// with a value xfconf carries, as `a{sv}`; `PropertyNotFound` when `base` names neither
    /// a property nor a branch above one.
    func xfconfProperties(channel: XfconfChannel, under base: XfconfProperty?) throws(XfconfRefusal) -> DBusValue {
        try loadForXfconf([channel.domain])
        let (entries, administrators) = read {
            ($0.projectedReaderEntries(domain: channel.domain), $0.administrator.xfconfTypes[channel.domain] ?? [:])
        }
        let types = (xfconf?.types(domain: channel.domain) ?? [:]).merging(administrators) { user, _ in user }
        var found = base == nil
        var properties: [(DBusValue, DBusValue)] = []
        properties.reserveCapacity(entries.count)
        for (key, stored) in entries {
            guard let property = XfconfProperty(key: key) else { continue }
            if let base {
                guard base.holds(property) else { continue }
                found = true
            }
            guard let value = XfconfValue(storedValue: stored, type: types[key]) else { continue }
            properties.append((.string(property.path), .variant(value.busValue)))
        }
        if let base, !found { throw .propertyNotFound(base.path, channel: channel.name) }
        properties.sort { ($0.0.stringValue ?? "") < ($1.0.stringValue ?? "") }
        return .dictionary(key: .string, value: .variant, properties)
    }

    /// `ListChannels`: every channel the store (once the changes accepted are durable) or an
    /// administrator has values in, by name.
    func xfconfChannels() throws(XfconfRefusal) -> [XfconfChannel] {
        try loadForXfconf(nil)
        let domains = read { state in
            // The domains the changes accepted leave with values, and the administrator's.
            var domains = Set(state.persistentDomainNamesUnsorted).union(state.staged.keys).filter(state.persistentDomainExists)
            domains.formUnion(state.administrator.defaults.keys)
            domains.formUnion(state.administrator.locks.keys)
            domains.formUnion(state.forced.keys)
            return domains
        }
        return domains.compactMap(XfconfChannel.init(domain:)).sorted()
    }

    // MARK: Changing

    /// `SetProperty`: stores `value` with its type, and answers once it is durable.
    func setXfconf(
        _ value: XfconfValue, channel: XfconfChannel, property: XfconfProperty, for call: DBusMessage, as caller: CallerIdentity
    ) throws(XfconfRefusal) {
        guard let xfconf else { return }
        let (domain, key) = (channel.domain, property.key)
        let stored = value.storedValue
        let type = value.storedType
        let staged: (effect: Effect, store: DomainStore)
        do {
            try configuration.limits.check(stored, subject: "the value of \(property.path) on channel \(channel.name)")
            staged = try acting(as: nil) { domains, store in (try domains.write(domain: domain, key: key, value: stored), store) }
        } catch  where error.name == .forced {
            throw .permissionDenied(property.path, channel: channel.name, reason: error.message)
        } catch {
            throw XfconfRefusal(error)
        }
        let previousType = xfconf.type(domain: domain, key: key)
        let typeChange: [StoreMutation] = previousType == type ? [] : [.setGVariantType(domain, key: key, type: type)]
        let who = gate.who(call, as: caller)
        switch staged.effect {
        case .persistent(let batch):
            // In force before the commit, so that the change's `PropertyChanged` carries it.
            xfconf.setType(type, domain: domain, key: key)
            commit([batch], also: typeChange, store: staged.store, who: who, origin: .local) { [self] result in
                if case .failure = result { xfconf.setType(previousType, domain: domain, key: key) }
                answerXfconf(call, after: result)
            }
        case .unchanged(let afterPending) where typeChange.isEmpty:
            guard afterPending else { return reply(to: call, []) }
            staged.store.commit([]) { [self] result in answerXfconf(call, after: result) }
        case .unchanged:
            // The same value with another type (an `int` 5 made a `uint` 5): xfconfd counts
            // that as a change of the property.
            xfconf.setType(type, domain: domain, key: key)
            commit([], also: typeChange, store: staged.store, who: who, origin: .local) { [self] result in
                switch result {
                case .success: sendPropertyChanged(channel: channel, property: property, value: value)
                case .failure: xfconf.setType(previousType, domain: domain, key: key)
                }
                answerXfconf(call, after: result)
            }
        case .volatile:
            preconditionFailure("a channel's domain is persistent")
        }
    }

    /// `ResetProperty`: removes the user's value of `property` (`recursive`: of it and every
    /// property below it; the whole channel when `property` is `nil`), so that a reader sees
    /// the administrator's default where there is one; answered once durable. Forced
    /// properties below `property` are left as they are in a recursive reset, as xfconfd
    /// leaves locked ones.
    func resetXfconf(
        channel: XfconfChannel, property: XfconfProperty?, recursive: Bool, for call: DBusMessage, as caller: CallerIdentity
    ) throws(XfconfRefusal) {
        guard let xfconf else { return }
        let domain = channel.domain
        try loadForXfconf([domain])
        // The keys are chosen and removed under one hold of the lock; a refusal of the names
        // is returned, not thrown, so that it passes `acting` as it is.
        let staged: (effect: Result<Effect, XfconfRefusal>, store: DomainStore, keys: [String])
        do {
            staged = try acting(as: nil) { domains, store in
                let stored = domains.projectedEntries(domain: domain)
                let chosen = Result { () throws(XfconfRefusal) in
                    try XfconfNames.keysToReset(
                        stored: stored, visible: domains.entries(domain: domain) ?? [:], channel: channel, property: property,
                        recursive: recursive, isForced: { domains.isForced(domain: domain, key: $0) })
                }
                guard case .success(let keys) = chosen else { return (chosen.map { _ in .unchanged(afterPending: false) }, store, []) }
                if keys.isEmpty { return (.success(.unchanged(afterPending: domains.batchesInFlight > 0)), store, []) }
                let whole = property == nil && keys.count == stored.count
                let effect = whole ? try domains.removeDomain(domain) : try domains.apply(domain: domain, set: [:], remove: keys)
                return (.success(effect), store, keys)
            }
        } catch  where error.name == .forced {
            throw .permissionDenied(property?.path ?? "/", channel: channel.name, reason: error.message)
        } catch {
            throw XfconfRefusal(error)
        }
        switch try staged.effect.get() {
        case .persistent(let batch):
            let previous = xfconf.types(domain: domain)
            let forgotten = staged.keys.filter { previous[$0] != nil }
            for key in forgotten { xfconf.setType(nil, domain: domain, key: key) }
            let typeChange = forgotten.map { StoreMutation.setGVariantType(domain, key: $0, type: nil) }
            commit([batch], also: typeChange, store: staged.store, who: gate.who(call, as: caller), origin: .local) { [self] result in
                if case .failure = result {
                    for key in forgotten { xfconf.setType(previous[key], domain: domain, key: key) }
                }
                answerXfconf(call, after: result)
            }
        case .unchanged(let afterPending):
            guard afterPending else { return reply(to: call, []) }
            staged.store.commit([]) { [self] result in answerXfconf(call, after: result) }
        case .volatile:
            preconditionFailure("a channel's domain is persistent")
        }
    }

    /// Answers a change once the store has it, or with `WriteFailure` when it could not.
    func answerXfconf(_ call: DBusMessage, after result: Result<Void, StoreError>) {
        switch result {
        case .success:
            reply(to: call, [])
        case .failure(let error):
            logger.error("store write failed", metadata: ["error": "\(error)"])
            reply(to: call, error: XfconfBus.ErrorName.writeFailure.busName, "the change was not saved: \(error)")
        }
    }

    // MARK: Signals

    /// Tells xfconf's clients of `change`, committed, when its domain is a channel's:
    /// `PropertyChanged` with the value a reader now sees for each property changed, and
    /// `PropertyRemoved` for each that has none left (or one xfconf cannot carry).
    func emitXfconf(_ change: Change) {
        guard let xfconf, let channel = XfconfChannel(domain: change.domain) else { return }
        xfconf.start { [self] in loadXfconfTypes() }
        let administrators = state.withLock { $0.domains?.administrator.xfconfTypes[change.domain] } ?? [:]
        let types = xfconf.types(domain: change.domain).merging(administrators) { user, _ in user }
        for (key, stored) in change.changed.sorted(by: { $0.key < $1.key }) {
            guard let property = XfconfProperty(key: key) else { continue }
            if let value = XfconfValue(storedValue: stored, type: types[key]) {
                sendPropertyChanged(channel: channel, property: property, value: value)
            } else {
                sendPropertyRemoved(channel: channel, property: property)
            }
        }
        for key in change.removed {
            guard let property = XfconfProperty(key: key) else { continue }
            sendPropertyRemoved(channel: channel, property: property)
        }
    }

    func sendPropertyChanged(channel: XfconfChannel, property: XfconfProperty, value: XfconfValue) {
        sendXfconfSignal(XfconfBus.propertyChangedSignal, [.string(channel.name), .string(property.path), .variant(value.busValue)])
    }

    func sendPropertyRemoved(channel: XfconfChannel, property: XfconfProperty) {
        sendXfconfSignal(XfconfBus.propertyRemovedSignal, [.string(channel.name), .string(property.path)])
    }

    /// Sends one of xfconf's signals from the connection owning xfconf's name, unless it is
    /// too large for the bus (logged instead).
    private func sendXfconfSignal(_ member: String, _ body: [DBusValue]) {
        let signal = DBusMessage.signal(path: XfconfBus.objectPath, interface: XfconfBus.interface, member: member, body: body)
        guard fitsOnBus(signal) else { return }
        send(signal, over: xfconfServingConnection)
    }
}
