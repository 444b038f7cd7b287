import DBus
import Logging
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import Synchronization

/// The Settings portal backend: serves `org.freedesktop.impl.portal.Settings` at
/// `/org/freedesktop/portal/desktop` on one connection, from prefsd domains read and
/// followed through the proxy on another.
///
/// Changes are taken in one worker task, in the order prefsd committed them; calls are
/// answered on the serving connection's queue from the state in memory, never waiting on
/// prefsd.
public final class SettingsPortalBackend: Sendable {
    struct State: Sendable {
        var settings = PortalSettings()
        /// The domains served besides the appearance namespace.
        var exposed: Set<String> = []
        /// The last contents seen of every followed domain.
        var domains: [String: [String: PropertyListValue]] = [:]
        var subscription: PreferencesSubscription?
    }

    let connection: DBusConnection
    let proxy: PreferencesProxy
    let logger: Logger
    let state = Mutex(State())
    let standard = StandardInterfaces(
        path: PortalBus.objectPath, introspectionXML: PortalBus.introspectionXML,
        interfaceProperties: [PortalBus.interface: ["version": .uint32(PortalBus.version)]]
    )
    /// prefsd's events about the followed domains, taken one at a time by the worker: at
    /// most ``PreferencesEventQueue/defaultCapacity``; a worker that falls further behind
    /// (a slow bus) gets one `reloadNeeded(nil)` in place of the events queued and reads
    /// every followed domain again (see ``PreferencesEventQueue``).
    let queue: PreferencesEventQueue

    /// A backend serving on `connection` and reading prefsd through `proxy`.
    public init(connection: DBusConnection, proxy: PreferencesProxy, logger: Logger) {
        self.connection = connection
        self.proxy = proxy
        self.logger = logger
        queue = PreferencesEventQueue()
    }

    /// Exports the object, loads the settings, and then takes the backend's bus name, so
    /// that no call is answered from settings not loaded yet.
    /// - Throws: `DBusError` when the object cannot be exported or the name is taken.
    public func start(replace: Bool) async throws(DBusError) {
        try connection.registerObject(path: PortalBus.objectPath) { [self] call in receive(call) }
        await follow()
        await reloadAll()
        Task { [self] in
            while let event = await queue.next() { await handle(event) }
        }
        let flags: UInt32 = 4 | 1 | (replace ? 2 : 0)  // do not queue, allow replacement, replace
        let reply = try await connection.requestName(PortalBus.busName, flags: flags)
        guard reply == 1 || reply == 4 else {
            throw .remote(name: StandardErrorName.addressInUse, message: "another process owns \(PortalBus.busName)")
        }
    }

    /// Stops following prefsd.
    public func stop() {
        queue.finish()
        state.withLock { $0.subscription }?.cancel()
    }

    // MARK: Following prefsd

    /// The domains followed: the appearance and configuration domains, and those exposed.
    private var followed: [String] {
        [Appearance.namespace, PortalSettings.configurationDomain] + state.withLock { $0.exposed.sorted() }
    }

    /// Subscribes to the followed domains, replacing the previous subscription.
    private func follow() async {
        let domains = followed
        do {
            let subscription = try await proxy.observe(domains) { [queue] event in queue.push(event) }
            let previous = state.withLock { state in
                defer { state.subscription = subscription }
                return state.subscription
            }
            previous?.cancel()
        } catch {
            logger.error("cannot follow prefsd's changes", metadata: ["error": "\(error)"])
        }
    }

    private func handle(_ event: PreferencesEvent) async {
        switch event {
        case .changed(let change):
            let entries = state.withLock { state -> [String: PropertyListValue] in
                var entries = change.isWholeDomain ? [:] : state.domains[change.domain] ?? [:]
                entries.merge(change.changed) { _, new in new }
                for key in change.removed { entries[key] = nil }
                return entries
            }
            await put(change.domain, entries)
        case .reloadNeeded(let domain?, _):
            await reload(domain)
        case .reloadNeeded(nil, _), .ownerChanged(_, .some):
            await reloadAll()
        case .ownerChanged(_, nil), .volatileChanged, .forcedKeysChanged, .disconnected:
            // Values stay as they were: a prefsd that comes back is read again then;
            // forced values arrive as Changed; volatile domains are not served.
            break
        }
    }

    /// Reads every followed domain again.
    private func reloadAll() async {
        for domain in followed { await reload(domain) }
    }

    /// Reads one domain again.
    private func reload(_ domain: String) async {
        do {
            await put(domain, try await proxy.readDomain(domain))
        } catch .notFound {
            await put(domain, [:])
        } catch {
            logger.warning("cannot read a domain from prefsd", metadata: ["domain": "\(domain)", "error": "\(error)"])
        }
    }

    /// Puts a domain's contents in force and announces what changed.
    private func put(_ domain: String, _ entries: [String: PropertyListValue]) async {
        if domain == PortalSettings.configurationDomain {
            return await configure(exposed: PortalSettings.exposedDomains(from: entries[PortalSettings.exposedDomainsKey]), entries)
        }
        let changes = state.withLock { state -> [SettingChange] in
            guard domain == Appearance.namespace || state.exposed.contains(domain) else { return [] }
            state.domains[domain] = entries
            return state.settings.update(namespace: domain, entries: entries)
        }
        for change in changes { emit(change) }
    }

    /// Serves the `exposed` domains from now on.
    private func configure(exposed: Set<String>, _ entries: [String: PropertyListValue]) async {
        let (added, removed) = state.withLock { state -> (Set<String>, Set<String>) in
            state.domains[PortalSettings.configurationDomain] = entries
            let added = exposed.subtracting(state.exposed), removed = state.exposed.subtracting(exposed)
            state.exposed = exposed
            for domain in removed {
                state.domains[domain] = nil
                _ = state.settings.update(namespace: domain, entries: nil)
            }
            return (added, removed)
        }
        guard !added.isEmpty || !removed.isEmpty else { return }
        logger.info("exposed domains changed", metadata: ["exposed": "\(exposed.sorted())"])
        await follow()
        for domain in added.sorted() { await reload(domain) }
    }

    private func emit(_ change: SettingChange) {
        do {
            try connection.send(.signal(
                path: PortalBus.objectPath, interface: PortalBus.interface, member: PortalBus.settingChangedSignal,
                body: [.string(change.namespace), .string(change.key), .variant(change.value)]
            ))
        } catch {
            logger.error("cannot send SettingChanged", metadata: ["error": "\(error)"])
        }
    }

    // MARK: Answering

    private func receive(_ call: DBusMessage) {
        let answer = standard.answer(call) ?? answerSettings(call)
        guard !call.noReplyExpected else { return }
        do { try connection.send(answer) } catch {
            logger.error("cannot answer a call", metadata: ["member": "\(call.member ?? "?")", "error": "\(error)"])
        }
    }

    private func answerSettings(_ call: DBusMessage) -> DBusMessage {
        guard call.interface == nil || call.interface == PortalBus.interface else {
            return call.makeError(name: StandardErrorName.unknownInterface, message: "the object \(PortalBus.objectPath) has no interface \(call.interface ?? "")")
        }
        switch (call.member, call.signature) {
        case ("ReadAll", "as"):
            guard case .array(_, let items) = call.body[0] else { break }
            let patterns = items.compactMap(\.stringValue).map(NamespacePattern.init)
            let all = state.withLock { $0.settings.readAll(patterns) }
            return call.makeReturn([.dictionary(key: .string, value: "a{sv}", all.sorted { $0.key < $1.key }.map { namespace, values in
                (.string(namespace), .dictionary(key: .string, value: .variant, values.sorted { $0.key < $1.key }.map { (.string($0.key), .variant($0.value)) }))
            })])
        case ("Read", "ss"):
            guard case .string(let namespace) = call.body[0], case .string(let key) = call.body[1] else { break }
            guard let value = state.withLock({ $0.settings.read(namespace: namespace, key: key) }) else {
                return call.makeError(name: PortalBus.notFoundError, message: "prefsd serves no setting \(key) in the namespace \(namespace)")
            }
            return call.makeReturn([.variant(value)])
        case ("ReadAll", _), ("Read", _):
            break
        default:
            return call.makeError(name: StandardErrorName.unknownMethod, message: "\(PortalBus.interface) has no method \(call.member ?? "(none)")")
        }
        let expected = call.member == "Read" ? "ss" : "as"
        return call.makeError(name: StandardErrorName.invalidArgs, message: "\(call.member ?? "") takes arguments of type (\(expected)), not (\(call.signature))")
    }
}
