import DBus
import PreferencesModel
import PreferencesProtocol

/// What each caller may do: a host process everything; a sandboxed application read and
/// write its own domain (its application ID) and suites named `APPID.*`, and read
/// `NSGlobalDomain`, persistent or volatile, and nothing else. The ``ReservedDomains``
/// (`NSGlobalDomain`, `io.github.prefsd` and `io.github.prefsd.*`,
/// `org.freedesktop.appearance`) are never a sandboxed application's own, whatever its ID.
extension CallerIdentity {
    /// Whether the caller may read the domain named `domain`.
    func mayRead(_ domain: String) -> Bool {
        switch self {
        case .host: true
        case .application: mayWrite(domain) || domain == DomainName.global.rawValue
        case .unidentified: false
        }
    }

    /// Whether the caller may change the domain named `domain`.
    func mayWrite(_ domain: String) -> Bool {
        switch self {
        case .host: true
        case .application(let id): !ReservedDomains.contains(domain) && (domain == id || domain.hasPrefix(id + "."))
        case .unidentified: false
        }
    }

    /// The body `method` is performed with, once the caller may make the call: `Lookup`'s
    /// search list loses the domains the caller may not read (they are skipped, as if
    /// they did not have the key).
    /// - Throws: ``PreferencesServiceError/accessDenied(_:)`` for a domain the caller may
    ///   not read, or change when the method changes it.
    func admit(_ method: PreferencesMethod, _ body: [DBusValue]) throws(PreferencesServiceError) -> [DBusValue] {
        if case .host = self { return body }
        if case .unidentified(let reason) = self {
            throw .accessDenied("prefsd cannot tell who is calling, so it answers nothing: \(reason)")
        }
        switch method {
        case .domains, .volatileDomains, .administeredDomains:
            return body
        case .lookup:
            guard case .array(let element, let list)? = body.first else { return body }
            let readable = list.filter { $0.stringValue.map(mayRead) ?? false }
            return [.array(element: element, readable)] + body.dropFirst()
        case .read, .readDomain, .readVolatileDomain, .isForced, .forcedKeys, .administratorDefaults:
            let domain = body.first?.stringValue ?? ""
            guard mayRead(domain) else { throw .accessDenied(refusal(reading: domain)) }
            return body
        case .write, .remove, .apply, .applyIf, .replaceDomain, .removeDomain, .setVolatileDomain, .removeVolatileDomain,
            .history, .recentHistory, .revertTo, .revertKeyTo:
            // A domain's history is seen and reverted only by those who may change it.
            let domain = body.first?.stringValue ?? ""
            guard mayWrite(domain) else {
                throw .accessDenied(mayRead(domain) ? "\(self) may read \(domain) but not change it" : refusal(reading: domain))
            }
            return body
        }
    }

    /// The answer of `method` as the caller may see it: `Domains`, `VolatileDomains` and
    /// `AdministeredDomains` list only the domains it may read.
    func filter(_ method: PreferencesMethod, answer body: [DBusValue]) -> [DBusValue] {
        guard method == .domains || method == .volatileDomains || method == .administeredDomains, self != .host,
            case .array(let element, let names)? = body.first
        else { return body }
        return [.array(element: element, names.filter { $0.stringValue.map(mayRead) ?? false })]
    }

    /// Why a read of `domain` is refused, in words a developer can act on.
    func refusal(reading domain: String) -> String {
        switch self {
        case .application(let id) where ReservedDomains.contains(domain) && domain != ReservedDomains.global:
            "no sandboxed application may use \(domain), whatever its ID (here \(id)): it configures prefsd or the desktop for everyone; change it from the host"
        case .application(let id):
            "the sandboxed application \(id) may use only \(id), suites named \(id).* and NSGlobalDomain (read-only), not \(domain)"
        default:
            "\(self) may not use \(domain)"
        }
    }
}
