import ClientDriver
import Foundation
import Gtk
import PreferencesClient
import PreferencesModel
import PreferencesProxy
import SettingsBundle

/// What the window knows of prefsd: which domains there are, and their values, forced keys
/// and pending writes as the client engine holds them (``ClientDriver``: the one cache,
/// kept true by prefsd's signals, writes laid over it and coalesced per domain). Lives on
/// the main thread; the proxy's replies and the engine's events come back to it through a
/// ``MainThreadHandle``.
final class SettingsController {
    let proxy: PreferencesProxy
    let locator: SettingsBundleLocator
    let languages: [String]
    /// The bundles found, by domain.
    private(set) var bundles: [String: SettingsBundle] = [:]
    /// Every domain listed: prefsd's, and those with a bundle.
    private(set) var domainNames: Set<String> = []
    /// Told when something changed; set by the window.
    weak var window: SettingsWindow?

    /// The engine, driven over `proxy`; its events are handled on the main thread.
    private(set) lazy var driver = ClientDriver(proxy: proxy) { [handle] event in handle.post { $0.received(event) } }
    /// The label of each key written and not settled yet (for the message of a refusal).
    private var writing: [WriteKey: String] = [:]
    /// Domains whose first load is on its way: the window is told when the last ends.
    private var loading: Set<String> = []
    /// Tells of domains that appear, of prefsd's restarts and of a lost connection.
    private var subscription: PreferencesSubscription?
    lazy var handle = MainThreadHandle(self)
    /// The domains whose history is being read, each with whether to read it again after.
    var historyLoads: [String: Bool] = [:]
    /// The administrator's defaults of each domain followed (`AdministratorDefaults`).
    var administratorDefaults: [String: [String: PropertyListValue]] = [:]
    /// The domains whose administrator defaults are being read, each with whether to read them again after.
    var administratorLoads: [String: Bool] = [:]

    init(proxy: PreferencesProxy, locator: SettingsBundleLocator, languages: [String]) {
        self.proxy = proxy
        self.locator = locator
        self.languages = languages
    }

    /// Subscribes to every domain's changes, then loads the bundles and every domain.
    func start() {
        let proxy = proxy, handle = handle
        Task {
            do throws(PreferencesProxyError) {
                // Raw: the values come from the engine; this only tells of new domains.
                let subscription = try await proxy.observe(nil, resolving: false) { event in
                    handle.post { $0.handle(event) }
                }
                handle.post { $0.subscription = subscription }
            } catch {
                handle.post { $0.window?.showError("Changes made elsewhere will not show: \(error.description)") }
            }
            handle.post { $0.reloadAll() }
        }
    }

    /// Reads the bundles and the list of domains again, and follows every domain (a domain
    /// followed already is kept true by the engine).
    func reloadAll() {
        let scan = locator.scan()
        var bundles: [String: SettingsBundle] = [:]
        for domain in scan.domains {
            if let bundle = locator.bundle(for: domain, languages: languages) { bundles[domain] = bundle }
        }
        self.bundles = bundles
        for problem in scan.problems + bundles.values.flatMap(\.problems) {
            FileHandleOutput.warn("settings bundle: \(problem.description)")
        }
        let proxy = proxy, handle = handle, bundleDomains = Array(bundles.keys), schemaDomains = SchemaCatalog.shared.domains
        Task {
            do throws(PreferencesProxyError) {
                let names = Set(try await proxy.domains()).union(bundleDomains).union(schemaDomains)
                handle.post { $0.follow(names) }
            } catch {
                handle.post { $0.window?.showError("The preferences could not be read: \(error.description)") }
            }
        }
    }

    /// Lists and follows `names`; the window hears once their first loads have ended.
    private func follow(_ names: Set<String>) {
        domainNames.formUnion(names)
        for name in names.sorted() where driver.follow(ClientDomain(name)) == .loading {
            loading.insert(name)
        }
        for name in names { loadAdministratorDefaults(name) }
        if loading.isEmpty { window?.domainsLoaded() }
    }

    /// What the engine tells.
    private func received(_ event: ClientDriverEvent) {
        switch event {
        case .loadFinished(let domain, _):
            guard loading.remove(domain.name) != nil, loading.isEmpty else { return }
            window?.domainsLoaded()
        case .changed(let domain, _, _), .forcedChanged(let domain, _):
            // An administrator's defaults file or database that changed is told as a change.
            loadAdministratorDefaults(domain.name)
            window?.valuesChanged(in: domain.name)
        case .writeFailed(let domain, let keys, let reason):
            for key in keys {
                let label = writing.removeValue(forKey: WriteKey(domain: domain.name, key: key)) ?? key
                window?.showError("“\(label)” was not saved: \(reason).")
            }
        case .writesSettled:
            // A write's own change was shown while it was on its way, when the widgets that
            // made it kept their state; a confirmation that changes nothing brings no `.changed`,
            // so the pages of those domains are refreshed now (a reset's widgets show the default).
            let domains = Set(writing.keys.map(\.domain))
            writing = [:]
            for domain in domains.sorted() { window?.valuesChanged(in: domain) }
        case .writeEnded:
            // Failures are shown by `writeFailed`, key by key.
            break
        }
    }

    /// The values of a domain: prefsd's, with this window's writes on their way over them
    /// (forced keys with the forced value), over the administrator's defaults.
    func values(in domain: String) -> [String: PropertyListValue] {
        let entries = driver.entries(of: ClientDomain(domain))
        // What prefsd reads for a key the user removed: the administrator's default (the
        // engine holds the removal alone, as it wrote it).
        guard let defaults = administratorDefaults[domain] else { return entries }
        return defaults.merging(entries) { _, value in value }
    }

    /// Every domain: those with a bundle (sorted by title), then the others (sorted).
    var domainsInOrder: (withBundle: [String], others: [String]) {
        let withBundle = bundles.keys.sorted { title(of: $0).localizedLowercase < title(of: $1).localizedLowercase }
        let others = domainNames.filter { bundles[$0] == nil }.sorted()
        return (withBundle, others)
    }

    /// A domain's name to show: its bundle's title, else the domain.
    func title(of domain: String) -> String {
        bundles[domain]?.title ?? domain
    }

    /// The value a setting shows: the stored one, else the administrator's default, else the bundle's default.
    func effectiveValue(_ domain: String, _ key: String) -> PropertyListValue? {
        driver.value(key, in: ClientDomain(domain)) ?? administratorDefault(domain, key) ?? bundles[domain]?.defaultValues[key]
    }

    /// Whether an administrator forces the key.
    func isForced(_ domain: String, _ key: String) -> Bool {
        driver.forcedKeys(in: ClientDomain(domain)).contains(key)
    }

    /// Whether a write of the key is on its way (its widget then keeps what the user set).
    func isWriting(_ domain: String, _ key: String) -> Bool {
        writing[WriteKey(domain: domain, key: key)] != nil && driver.hasPendingWrites(in: ClientDomain(domain))
    }

    // MARK: Writing

    /// Writes `value` (`nil`: removes the key): shown at once, sent on the domain's lane,
    /// quick successive writes coalesced by the engine so the last one wins. A refusal is
    /// shown in the window, naming `label`, and the widget goes back to the stored value.
    func write(_ domain: String, _ key: String, _ value: PropertyListValue?, label: String) {
        guard driver.write([(key, value)], in: ClientDomain(domain)) else {
            return refusedAtOnce(domain, label)
        }
        writing[WriteKey(domain: domain, key: key)] = label
    }

    /// Removes every key a bundle gives a default for (back to the defaults), in one batch.
    func resetToDefaults(_ domain: String) {
        guard let bundle = bundles[domain] else { return }
        // Only the user's own values: an administrator's default stays (there is nothing to remove).
        let keys = bundle.defaultValues.keys.filter { ownValue(domain, $0) != nil }.sorted()
        guard !keys.isEmpty else { return }
        guard driver.write(keys.map { (key: $0, value: PropertyListValue?.none) }, in: ClientDomain(domain)) else {
            return refusedAtOnce(domain, title(of: domain))
        }
        for key in keys { writing[WriteKey(domain: domain, key: key)] = title(of: domain) }
    }

    /// A write the engine refused before sending it: a forced key, or a domain not loaded.
    private func refusedAtOnce(_ domain: String, _ label: String) {
        let error: PreferencesProxyError =
            driver.phase(of: ClientDomain(domain)) == .loaded
            ? PreferencesProxyError(.forced("an administrator forces it")) : .serviceUnavailable("the domain is not loaded")
        window?.showError(ErrorMessages.refused(label, error))
        window?.valuesChanged(in: domain)
    }

    // MARK: Signals

    /// prefsd's raw signals, for what the engine does not tell: a domain not listed yet.
    private func handle(_ event: PreferencesEvent) {
        switch event {
        case .changed(let change):
            if !domainNames.contains(change.domain) { follow([change.domain]) }
        case .reloadNeeded, .ownerChanged:
            reloadAll()
        case .disconnected:
            window?.showError("The connection to the preferences service was lost; changes are no longer saved.")
        case .forcedKeysChanged, .volatileChanged:
            break
        }
    }
}

/// A key of a domain.
struct WriteKey: Hashable, Sendable {
    var domain: String
    var key: String
}

/// Warnings for whoever started the app (bundle problems), on standard error.
enum FileHandleOutput {
    static func warn(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
