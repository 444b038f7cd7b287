import ClientDriver
import DBus
import Logging
import PreferencesClient
import PreferencesModel
import PreferencesProtocol
import PreferencesProxy
import Synchronization

/// The Settings portal backend: serves `org.freedesktop.impl.portal.Settings` at
/// `/org/freedesktop/portal/desktop` on one connection, from prefsd domains read and
/// followed on another by the client engine (``ClientDriver``), whose cache is the only
/// copy of the domains' values: the backend keeps only what it serves, in the portal's
/// types (``PortalSettings``).
///
/// The engine tells each change of a followed domain, in the order prefsd committed them;
/// calls are answered on the serving connection's queue from the state in memory, never
/// waiting on prefsd.
public final class SettingsPortalBackend: Sendable {
    struct State: Sendable {
        var settings = PortalSettings()
        /// The domains served besides the appearance namespace.
        var exposed: Set<String> = []
    }

    let connection: DBusConnection
    let proxy: PreferencesProxy
    let logger: Logger
    let state = Mutex(State())
    let standard = StandardInterfaces(
        path: PortalBus.objectPath, introspectionXML: PortalBus.introspectionXML,
        interfaceProperties: [PortalBus.interface: ["version": .uint32(PortalBus.version)]]
    )
    /// The engine, driven over `proxy`; set once in `init`.
    private let driverBox = Mutex<ClientDriver?>(nil)
    private var driver: ClientDriver? { driverBox.withLock { $0 } }

    /// A backend serving on `connection` and reading prefsd through `proxy`.
    public init(connection: DBusConnection, proxy: PreferencesProxy, logger: Logger) {
        self.connection = connection
        self.proxy = proxy
        self.logger = logger
        let driver = ClientDriver(proxy: proxy) { [weak self] event in self?.received(event) }
        driverBox.withLock { $0 = driver }
    }

    /// Exports the object, loads the settings, and then takes the backend's bus name, so
    /// that no call is answered from settings not loaded yet.
    /// - Throws: `DBusError` when the object cannot be exported or the name is taken.
    public func start(replace: Bool) async throws(DBusError) {
        try connection.registerObject(path: PortalBus.objectPath) { [self] call in receive(call) }
        // The configuration and the appearance namespace are loaded together (one round
        // trip); the configuration follows the domains it exposes, loaded together too.
        let first = [PortalSettings.configurationDomain, Appearance.namespace].map { ClientDomain($0) }
        for domain in first { driver?.follow(domain) }
        for domain in first { _ = await driver?.load(domain) }
        for domain in state.withLock({ $0.exposed.sorted() }) { _ = await driver?.load(ClientDomain(domain)) }
        let flags: UInt32 = 4 | 1 | (replace ? 2 : 0)  // do not queue, allow replacement, replace
        let reply = try await connection.requestName(PortalBus.busName, flags: flags)
        guard reply == 1 || reply == 4 else {
            throw .remote(name: StandardErrorName.addressInUse, message: "another process owns \(PortalBus.busName)")
        }
    }

    /// Stops following prefsd.
    public func stop() {
        guard let driver else { return }
        for domain in [Appearance.namespace, PortalSettings.configurationDomain] + state.withLock({ $0.exposed.sorted() }) {
            driver.forget(ClientDomain(domain))
        }
    }

    // MARK: Following prefsd

    /// What the engine tells: a domain loaded or changed is put in force whole, from the
    /// engine's cache.
    private func received(_ event: ClientDriverEvent) {
        switch event {
        case .loadFinished(let domain, loaded: true), .changed(let domain, _, _):
            guard let driver else { return }
            put(domain.name, driver.entries(of: domain))
        case .loadFinished(let domain, loaded: false):
            logger.warning("cannot read a domain from prefsd", metadata: ["domain": "\(domain.name)"])
        case .forcedChanged, .writeFailed, .writesSettled, .writeEnded:
            // Forced values arrive as changes; the backend writes nothing.
            break
        }
    }

    /// Puts a domain's contents in force and announces what changed.
    private func put(_ domain: String, _ entries: [String: PropertyListValue]) {
        if domain == PortalSettings.configurationDomain {
            return configure(exposed: PortalSettings.exposedDomains(from: entries[PortalSettings.exposedDomainsKey]))
        }
        let changes = state.withLock { state -> [SettingChange] in
            guard domain == Appearance.namespace || state.exposed.contains(domain) else { return [] }
            return state.settings.update(namespace: domain, entries: entries)
        }
        for change in changes { emit(change) }
    }

    /// Serves the `exposed` domains from now on: follows those added (each announced
    /// once loaded), forgets those removed.
    private func configure(exposed: Set<String>) {
        let (added, removed) = state.withLock { state -> (Set<String>, Set<String>) in
            let added = exposed.subtracting(state.exposed), removed = state.exposed.subtracting(exposed)
            state.exposed = exposed
            for domain in removed { _ = state.settings.update(namespace: domain, entries: nil) }
            return (added, removed)
        }
        guard !added.isEmpty || !removed.isEmpty, let driver else { return }
        logger.info("exposed domains changed", metadata: ["exposed": "\(exposed.sorted())"])
        for domain in removed.sorted() { driver.forget(ClientDomain(domain)) }
        for domain in added.sorted() {
            // Followed before (loaded): put in force now; else when its load finishes.
            if driver.follow(ClientDomain(domain)) == .loaded { put(domain, driver.entries(of: ClientDomain(domain))) }
        }
    }

    private func emit(_ change: SettingChange) {
        do {
            try connection.send(
                .signal(
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
            return call.makeError(
                name: StandardErrorName.unknownInterface, message: "the object \(PortalBus.objectPath) has no interface \(call.interface ?? "")")
        }
        switch (call.member, call.signature) {
        case ("ReadAll", "as"):
            guard case .array(_, let items) = call.body[0] else { break }
            let patterns = items.compactMap(\.stringValue).map(NamespacePattern.init)
            let all = state.withLock { $0.settings.readAll(patterns) }
            return call.makeReturn([
                .dictionary(
                    key: .string, value: "a{sv}",
                    all.sorted { $0.key < $1.key }.map { namespace, values in
                        (
                            .string(namespace),
                            .dictionary(key: .string, value: .variant, values.sorted { $0.key < $1.key }.map { (.string($0.key), .variant($0.value)) })
                        )
                    })
            ])
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
        return call.makeError(
            name: StandardErrorName.invalidArgs, message: "\(call.member ?? "") takes arguments of type (\(expected)), not (\(call.signature))")
    }
}
