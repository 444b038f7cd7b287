/// Where a preference is looked up, in order: the domains a preferences object searches.
///
/// Forced keys come before everything (they are looked up in the managed data of each
/// persistent domain), then the argument domain, the application domain, the suites in the
/// order added, `NSGlobalDomain`, the language domain and the registration domain.
public struct SearchList: Sendable, Hashable {
    /// The application's own domain.
    public var application: DomainName
    /// Suites added with `addSuite(named:)`, in the order added.
    public private(set) var suites: [DomainName] = []

    /// A search list for an application domain.
    public init(application: DomainName) {
        self.application = application
    }

    /// Adds a suite after those already added; adding one twice, the application's own
    /// domain or the global domain changes nothing.
    public mutating func addSuite(_ suite: DomainName) {
        guard suite != application, suite != .global, !suites.contains(suite) else { return }
        suites.append(suite)
    }

    /// Removes a suite.
    public mutating func removeSuite(_ suite: DomainName) {
        suites.removeAll { $0 == suite }
    }

    /// The persistent (or volatile) domains the service is asked for, in search order:
    /// the application domain, the suites, then `NSGlobalDomain`.
    public var serviceDomains: [DomainName] {
        [application] + suites + [.global]
    }
}
