import ClientDriver
import PreferencesClient
import PreferencesModel

/// What one preferences object searches: its search list of prefsd's domains (read from
/// the engine's cache) and its own domains besides.
struct Layers: Sendable {
    var searchList: SearchList {
        didSet { setServiceDomains() }
    }
    var argument: [String: PropertyListValue]
    var language: [String: PropertyListValue]
    var registration: [String: PropertyListValue] = [:]
    /// `searchList.serviceDomains`, kept: every resolution walks it.
    private(set) var serviceDomains: [DomainName] = []
    /// The same, as the engine names them.
    private(set) var clientDomains: [ClientDomain] = []

    init(searchList: SearchList, argument: [String: PropertyListValue], language: [String: PropertyListValue]) {
        self.searchList = searchList
        self.argument = argument
        self.language = language
        setServiceDomains()
    }

    private mutating func setServiceDomains() {
        serviceDomains = searchList.serviceDomains
        clientDomains = serviceDomains.map { ClientDomain($0.rawValue) }
    }

    /// The effective value of a key: forced keys, the argument domain, prefsd's domains in
    /// search order (as `driver` shows them; none without one), the language domain, the
    /// registration domain.
    func resolve(_ key: String, in driver: ClientDriver?) -> PropertyListValue? {
        if let driver {
            for domain in clientDomains where driver.isForced(key, in: domain) {
                if let value = driver.value(key, in: domain) { return value }
            }
        }
        if let value = argument[key] { return value }
        if let driver {
            for domain in clientDomains {
                if let value = driver.value(key, in: domain) { return value }
            }
        }
        return language[key] ?? registration[key]
    }

    /// Every key any layer has.
    func allKeys(in driver: ClientDriver?) -> Set<String> {
        var keys = Set(argument.keys).union(language.keys).union(registration.keys)
        if let driver {
            for domain in clientDomains { keys.formUnion(driver.entries(of: domain).keys) }
        }
        return keys
    }
}
