import Foundation
import PreferencesClient
import PreferencesModel
import PreferencesProtocol

/// Persistent and volatile domains: two namespaces, as in contract 0.2. A persistent domain
/// is never a volatile one, and a volatile domain is never searched by `object(forKey:)`.
/// Every change shows at once in every preferences object of the process.
extension Preferences {
    /// The contents of a persistent domain, or `nil` when there is none (or prefsd cannot
    /// be reached). Changes this process made show at once, before prefsd has answered.
    public func persistentDomain(forName domainName: String) -> [String: Any]? {
        guard let name = try? DomainName(domainName) else { return nil }
        return session.entries(of: ClientDomain(name.rawValue))?.mapValues(\.foundationObject)
    }

    /// Replaces a persistent domain's contents, as `setPersistentDomain(_:forName:)`.
    /// Shown at once in this process, sent without waiting; `synchronize()` reports a refusal
    /// (and the old contents show again).
    public func setPersistentDomain(_ domain: [String: Any], forName domainName: String) {
        guard let name = validated(domainName), let values = propertyList(domain) else { return }
        session.replace(ClientDomain(name.rawValue), with: values, origin: self)
    }

    /// Removes a persistent domain, as `removePersistentDomain(forName:)`; shown at once.
    public func removePersistentDomain(forName domainName: String) {
        guard let name = validated(domainName) else { return }
        session.replace(ClientDomain(name.rawValue), with: nil, origin: self)
    }

    /// The names of the persistent domains, sorted (empty when prefsd cannot be reached).
    public func persistentDomainNames() -> [String] {
        session.domainNames(volatile: false)
    }

    /// The contents of a volatile domain (empty when there is none). `NSArgumentDomain` and
    /// `NSRegistrationDomain` are this object's own volatile domains: the command line's
    /// defaults and those given to `register(defaults:)`.
    public func volatileDomain(forName domainName: String) -> [String: Any] {
        if let own = ownVolatileDomain(domainName) { return own.mapValues(\.foundationObject) }
        guard let name = try? DomainName(domainName) else { return [:] }
        return (session.entries(of: ClientDomain(name.rawValue, volatile: true)) ?? [:]).mapValues(\.foundationObject)
    }

    /// Creates a volatile domain, kept only in prefsd's memory until it exits and shared by
    /// the session; it is not searched by `object(forKey:)` (read it with
    /// `volatileDomain(forName:)`). A volatile domain of that name must not exist already
    /// (`NSArgumentDomain` and `NSRegistrationDomain` always do, and one an earlier run of
    /// the program made lasts until prefsd exits): a refusal shows as `synchronize()`
    /// returning false. `createVolatileDomain(_:forName:)` waits for prefsd's answer and
    /// throws the reason.
    public func setVolatileDomain(_ domain: [String: Any], forName domainName: String) {
        guard let values = propertyList(domain) else { return }
        sendVolatileDomain(values, forName: domainName, completion: nil)
    }

    /// Creates a volatile domain as `setVolatileDomain(_:forName:)` does, and waits until
    /// prefsd has it.
    /// - Throws: `PreferencesError` saying why it was refused: `.refused(.exists)` when a
    ///   volatile domain of that name exists (remove it first with
    ///   `removeVolatileDomain(forName:)`, or use it as it is), `.refused(.invalidName)`
    ///   for a name that is not a domain name, a size limit, or prefsd unreachable.
    public func createVolatileDomain(_ domain: [String: PropertyListValue], forName domainName: String) async throws(PreferencesError) {
        let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<Void, PreferencesError>, Never>) in
            sendVolatileDomain(domain, forName: domainName) { continuation.resume(returning: $0) }
        }
        try result.get()
    }

    private func sendVolatileDomain(_ values: [String: PropertyListValue], forName domainName: String, completion: BusSession.Completion?) {
        if ownVolatileDomain(domainName) != nil {
            let error = PreferencesError(
                .exists("\(domainName) is this object's own volatile domain; use register(defaults:) for the registration domain"))
            session.recordRefusal(error)
            completion?(.failure(error))
            return
        }
        guard let name = validated(domainName, completion: completion) else { return }
        // prefsd refuses it when a volatile domain of the name exists (this process's
        // earlier one, not answered yet, included: it goes first on the domain's lane).
        session.replace(ClientDomain(name.rawValue, volatile: true), with: values, origin: self, completion: completion)
    }

    /// Removes a volatile domain. For `NSArgumentDomain` or `NSRegistrationDomain` it empties
    /// this object's own domain.
    public func removeVolatileDomain(forName domainName: String) {
        switch domainName {
        case Self.argumentDomain:
            let keys = local.withLock { Set($0.layers.argument.keys) }
            return changeLayers(keys: keys, notify: true) { $0.argument = [:] }
        case Self.registrationDomain:
            let keys = local.withLock { Set($0.layers.registration.keys) }
            return changeLayers(keys: keys, notify: true) { $0.registration = [:] }
        default:
            guard let name = validated(domainName) else { return }
            session.replace(ClientDomain(name.rawValue, volatile: true), with: nil, origin: self)
        }
    }

    /// The names of the volatile domains, sorted: prefsd's and this object's own
    /// `NSArgumentDomain` and `NSRegistrationDomain`.
    public var volatileDomainNames: [String] {
        Array(Set(session.domainNames(volatile: true)).union([Self.argumentDomain, Self.registrationDomain])).sorted()
    }

    // MARK: Helpers

    /// The argument or registration domain, for their names.
    private func ownVolatileDomain(_ domainName: String) -> [String: PropertyListValue]? {
        switch domainName {
        case Self.argumentDomain: local.withLock { $0.layers.argument }
        case Self.registrationDomain: local.withLock { $0.layers.registration }
        default: nil
        }
    }

    /// The domain name, or `nil` with the refusal recorded for `synchronize()` and told to
    /// `completion`.
    private func validated(_ domainName: String, completion: BusSession.Completion? = nil) -> DomainName? {
        do {
            return try DomainName(domainName)
        } catch {
            let refusal = PreferencesError(error)
            session.recordRefusal(refusal)
            completion?(.failure(refusal))
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
