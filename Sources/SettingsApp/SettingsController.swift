import Foundation
import Gtk
import PreferencesModel
import PreferencesProxy
import SettingsBundle

/// What the window knows of prefsd: every domain's values and forced keys, kept true by
/// prefsd's signals, and the writes on their way. Lives on the main thread; the proxy's
/// replies and signals come back to it through a ``MainThreadHandle``.
final class SettingsController {
    let proxy: PreferencesProxy
    let locator: SettingsBundleLocator
    let languages: [String]
    /// The bundles found, by domain.
    private(set) var bundles: [String: SettingsBundle] = [:]
    /// The stored values of every persistent domain (forced keys with the forced value).
    private(set) var values: [String: [String: PropertyListValue]] = [:]
    /// The keys an administrator forces, by domain.
    private(set) var forced: [String: Set<String>] = [:]
    /// Told when something changed; set by the window.
    weak var window: SettingsWindow?

    private var writes: [WriteSlot.Key: WriteSlot] = [:]
    private var subscription: PreferencesSubscription?
    lazy var handle = MainThreadHandle(self)
    /// The domains whose history is being read, each with whether to read it again after.
    var historyLoads: [String: Bool] = [:]

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
                let subscription = try await proxy.observe(nil) { event in
                    handle.post { $0.handle(event) }
                }
                handle.post { $0.subscription = subscription }
            } catch {
                handle.post { $0.window?.showError("Changes made elsewhere will not show: \(error.description)") }
            }
            handle.post { $0.reloadAll() }
        }
    }

    /// Reads the bundles and every domain again.
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
                var values: [String: [String: PropertyListValue]] = [:]
                var forced: [String: Set<String>] = [:]
                for name in names {
                    values[name] = (try? await proxy.readDomain(name)) ?? [:]
                    forced[name] = Set((try? await proxy.forcedKeys(name)) ?? [])
                }
                let loadedValues = values, loadedForced = forced
                handle.post { $0.loaded(values: loadedValues, forced: loadedForced) }
            } catch {
                handle.post { $0.window?.showError("The preferences could not be read: \(error.description)") }
            }
        }
    }

    private func loaded(values: [String: [String: PropertyListValue]], forced: [String: Set<String>]) {
        self.values = values
        self.forced = forced
        window?.domainsLoaded()
    }

    /// Every domain: those with a bundle (sorted by title), then the others (sorted).
    var domainsInOrder: (withBundle: [String], others: [String]) {
        let withBundle = bundles.keys.sorted { title(of: $0).localizedLowercase < title(of: $1).localizedLowercase }
        let others = values.keys.filter { bundles[$0] == nil }.sorted()
        return (withBundle, others)
    }

    /// A domain's name to show: its bundle's title, else the domain.
    func title(of domain: String) -> String {
        bundles[domain]?.title ?? domain
    }

    /// The value a setting shows: the stored one, else the bundle's default.
    func effectiveValue(_ domain: String, _ key: String) -> PropertyListValue? {
        values[domain]?[key] ?? bundles[domain]?.defaultValues[key]
    }

    /// Whether an administrator forces the key.
    func isForced(_ domain: String, _ key: String) -> Bool {
        forced[domain]?.contains(key) ?? false
    }

    /// Whether a write of the key is on its way (its widget then keeps what the user set).
    func isWriting(_ domain: String, _ key: String) -> Bool {
        writes[WriteSlot.Key(domain: domain, key: key)] != nil
    }

    // MARK: Writing

    /// Writes `value` (`nil`: removes the key) at once; quick successive writes of one key
    /// are coalesced so the last one wins. A refusal is shown in the window, naming
    /// `label`, and the widget goes back to the stored value.
    func write(_ domain: String, _ key: String, _ value: PropertyListValue?, label: String) {
        let slotKey = WriteSlot.Key(domain: domain, key: key)
        writes[slotKey, default: WriteSlot(label: label)].next = .some(value)
        writes[slotKey]?.label = label
        if writes[slotKey]?.inFlight == false { send(slotKey) }
    }

    private func send(_ slotKey: WriteSlot.Key) {
        guard var slot = writes[slotKey], let next = slot.next else {
            writes[slotKey] = nil
            window?.valuesChanged(in: slotKey.domain)
            return
        }
        slot.next = nil
        slot.inFlight = true
        writes[slotKey] = slot
        let proxy = proxy, handle = handle, label = slot.label
        Task {
            var failure: PreferencesProxyError?
            do throws(PreferencesProxyError) {
                if let value = next { try await proxy.write(slotKey.domain, slotKey.key, value) } else { try await proxy.remove(slotKey.domain, slotKey.key) }
            } catch {
                failure = error
            }
            let outcome = failure
            handle.post { $0.finished(slotKey, label: label, failure: outcome) }
        }
    }

    private func finished(_ slotKey: WriteSlot.Key, label: String, failure: PreferencesProxyError?) {
        writes[slotKey]?.inFlight = false
        guard let failure else { return send(slotKey) }
        writes[slotKey] = nil
        window?.showError(ErrorMessages.refused(label, failure))
        let proxy = proxy, handle = handle
        Task {
            let stored = try? await proxy.readIfPresent(slotKey.domain, slotKey.key)
            handle.post { controller in
                controller.values[slotKey.domain, default: [:]][slotKey.key] = stored ?? nil
                controller.window?.valuesChanged(in: slotKey.domain)
            }
        }
    }

    /// Removes every key a bundle gives a default for (back to the defaults), in one batch.
    func resetToDefaults(_ domain: String) {
        guard let bundle = bundles[domain] else { return }
        let keys = Array(bundle.defaultValues.keys).filter { values[domain]?[$0] != nil && !isForced(domain, $0) }
        let proxy = proxy, handle = handle, title = title(of: domain)
        Task {
            do throws(PreferencesProxyError) {
                try await proxy.apply(domain, set: [:], remove: keys)
            } catch {
                handle.post { $0.window?.showError(ErrorMessages.refused(title, error)) }
            }
        }
    }

    // MARK: Signals

    private func handle(_ event: PreferencesEvent) {
        switch event {
        case .changed(let change):
            let isNew = values[change.domain] == nil
            if change.isWholeDomain {
                values[change.domain] = change.changed
            } else {
                values[change.domain, default: [:]].merge(change.changed) { _, new in new }
                for key in change.removed { values[change.domain]?[key] = nil }
            }
            if isNew { window?.domainsLoaded() }
            window?.valuesChanged(in: change.domain)
        case .forcedKeysChanged(let domain, let keys, _):
            forced[domain] = Set(keys)
            window?.valuesChanged(in: domain)
        case .reloadNeeded, .ownerChanged:
            reloadAll()
        case .disconnected:
            window?.showError("The connection to the preferences service was lost; changes are no longer saved.")
        case .volatileChanged:
            break
        }
    }
}

/// The writes of one key: the one on its way and the next one to send.
struct WriteSlot {
    struct Key: Hashable, Sendable {
        var domain: String
        var key: String
    }

    var label: String
    var inFlight = false
    /// The value to send next (`.some(nil)`: remove the key), if any.
    var next: PropertyListValue??
}

/// Warnings for whoever started the app (bundle problems), on standard error.
enum FileHandleOutput {
    static func warn(_ line: String) {
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
