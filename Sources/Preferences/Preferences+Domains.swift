import DBus
import Foundation
import PreferencesModel
import PreferencesProtocol

extension Preferences {
    /// The contents of a persistent domain, or `nil` when there is none (or prefsd cannot
    /// be reached).
    public func persistentDomain(forName domainName: String) -> [String: Any]? {
        guard let name = try? DomainName(domainName),
              let entries = try? readDomain(name) else { return nil }
        return entries.mapValues(\.foundationObject)
    }

    /// Replaces a persistent domain's contents, as `setPersistentDomain(_:forName:)`.
    /// Sent without waiting; `synchronize()` reports a refusal.
    public func setPersistentDomain(_ domain: [String: Any], forName domainName: String) {
        guard let name = validated(domainName), let values = propertyList(domain) else { return }
        session.change(.replaceDomain, [.string(name.rawValue), PropertyListValue.dictionary(values).dbusValue])
    }

    /// Removes a persistent domain, as `removePersistentDomain(forName:)`.
    public func removePersistentDomain(forName domainName: String) {
        guard let name = validated(domainName) else { return }
        session.change(.removeDomain, [.string(name.rawValue)])
    }

    /// The names of the persistent domains, sorted (empty when prefsd cannot be reached).
    public func persistentDomainNames() -> [String] {
        (try? names(.domains)) ?? []
    }

    /// The contents of a volatile domain (empty when there is none).
    public func volatileDomain(forName domainName: String) -> [String: Any] {
        guard let name = try? DomainName(domainName),
              let entries = try? readDomain(name, method: .readVolatileDomain) else { return [:] }
        return entries.mapValues(\.foundationObject)
    }

    /// Creates a volatile domain, kept only in prefsd's memory until it exits. A domain of
    /// that name must not exist already; `synchronize()` reports a refusal.
    public func setVolatileDomain(_ domain: [String: Any], forName domainName: String) {
        guard let name = validated(domainName), let values = propertyList(domain) else { return }
        session.change(.setVolatileDomain, [.string(name.rawValue), PropertyListValue.dictionary(values).dbusValue])
    }

    /// Removes a volatile domain.
    public func removeVolatileDomain(forName domainName: String) {
        guard let name = validated(domainName) else { return }
        session.change(.removeVolatileDomain, [.string(name.rawValue)])
    }

    /// The names of the volatile domains, sorted (empty when prefsd cannot be reached).
    public var volatileDomainNames: [String] {
        (try? names(.volatileDomains)) ?? []
    }

    // MARK: Helpers

    private func readDomain(_ name: DomainName, method: PreferencesMethod = .readDomain) throws(PreferencesError) -> [String: PropertyListValue] {
        let reply = try session.callBlocking(method, [.string(name.rawValue)])
        guard let body = reply.body.first else { return [:] }
        do { return try PropertyListValue.dictionary(dbus: body) } catch { throw PreferencesError(error) }
    }

    private func names(_ method: PreferencesMethod) throws(PreferencesError) -> [String] {
        let reply = try session.callBlocking(method, [])
        guard case .array(_, let items)? = reply.body.first else { return [] }
        var names: [String] = []
        for case .string(let name) in items { names.append(name) }
        return names
    }

    private func validated(_ domainName: String) -> DomainName? {
        do {
            return try DomainName(domainName)
        } catch {
            session.recordRefusal(PreferencesError(error))
            return nil
        }
    }

    private func propertyList(_ domain: [String: Any]) -> [String: PropertyListValue]? {
        do {
            guard case .dictionary(let values) = try PropertyListValue(foundation: domain) else { return nil }
            return values
        } catch {
            session.recordRefusal(PreferencesError(error))
            return nil
        }
    }
}
