import Foundation
import PreferencesModel
import PreferencesProtocol
import Synchronization

/// The NSUserDefaults model for Linux, backed by prefsd over D-Bus.
///
/// A preferences object searches, in order: keys an administrator forces, the argument
/// domain (`-Key value` on the command line), its application domain, the suites added to
/// it, `NSGlobalDomain`, the language domain (`AppleLanguages`, `AppleLocale` from the
/// locale environment) and its registration domain. Reads are answered from a cache loaded
/// once and kept true by prefsd's `Changed` signals, so a read that hits it costs no round
/// trip. Every change (keys and whole domains) shows at once in every object of this
/// process and reaches the disk in the background, the writes of a domain made while one is
/// in flight merged into one; `synchronize()` waits for them and brings in what other
/// processes committed. Volatile domains are a namespace apart and are never searched.
///
/// Every method may be called from any thread or task.
public final class Preferences: Sendable {
    /// The object for the running application, whose domain is named after the executable.
    public static let standard = Preferences(applicationIdentifier: defaultApplicationIdentifier)

    /// Posted on `NotificationCenter.default`, with the preferences object as the object, as
    /// UserDefaults posts it: for every change made through the object (a key set, even to
    /// the value it had, or removed, even when absent; a persistent or volatile domain set or
    /// removed; a suite added or removed), and when another process or object changes a
    /// domain it searches, even a value hidden by an earlier domain. `observe(_:_:)` and
    /// `changes` report only changes of effective values.
    public static let didChangeNotification = Notification.Name("PreferencesDidChangeNotification")

    /// The name of the global domain.
    public static let globalDomain = DomainName.global.rawValue
    /// The conventional name of the argument domain.
    public static let argumentDomain = DomainName.argument.rawValue
    /// The conventional name of the registration domain.
    public static let registrationDomain = DomainName.registration.rawValue

    /// The domain this object writes to: the application domain or the suite it was made for.
    public let domainName: String

    let domain: DomainName
    let session: BusSession
    let local = Mutex<LocalState>(LocalState())

    /// What the object holds besides the shared cache.
    struct LocalState: Sendable {
        var layers = Layers(searchList: SearchList(application: .global), argument: [:], language: [:])
        /// Changes to `layers`; a resolved value is kept only if they did not change meanwhile.
        var layersVersion: UInt64 = 0
        /// Effective values already resolved while the session's generation stands.
        var resolved = ResolvedValues()
        var resolvedGeneration: UInt64 = 0
        var observers: [UInt64: Observer] = [:]
        var streams: [UInt64: AsyncStream<PreferencesChange>.Continuation] = [:]
        /// The effective values last told to the streams, for every key told (while a
        /// stream exists; `nil` until the first is made).
        var streamSeen: [String: PropertyListValue?]?
        var nextToken: UInt64 = 0
    }

    struct Observer: Sendable {
        var key: String
        var handler: @Sendable (PropertyListValue?) -> Void
        /// The effective value last told to the handler (or seen when it was made).
        var lastTold: PropertyListValue?
    }

    /// A preferences object for an application domain.
    /// - Parameters:
    ///   - applicationIdentifier: the application domain, like `com.example.Editor`.
    ///     Characters a domain name cannot hold are replaced with `-`.
    ///   - arguments: the command line the argument domain is built from (without the
    ///     executable's path).
    ///   - environment: where the language domain's locale comes from.
    ///   - busAddress: the bus prefsd is on; `nil` for the session bus.
    public init(
        applicationIdentifier: String,
        arguments: [String] = Array(CommandLine.arguments.dropFirst()),
        environment: [String: String] = ProcessInfo.processInfo.environment,
        busAddress: String? = nil
    ) {
        domain = Self.sanitized(applicationIdentifier)
        domainName = domain.rawValue
        session = BusSession.shared(address: busAddress)
        local.withLock { local in
            local.layers = Layers(
                searchList: SearchList(application: domain),
                argument: ArgumentDomain.parse(arguments),
                language: LanguageDomain.make(environment: environment)
            )
            local.layers.registration = Self.settingsBundleDefaults(for: domain, environment: environment)
        }
        session.subscribe(self)
    }

    /// A preferences object for a suite (a domain shared by several applications), as
    /// `UserDefaults(suiteName:)`: it reads and writes the suite's domain in place of the
    /// application domain. `nil` gives the application domain; the global domain or an
    /// invalid name gives no object.
    public convenience init?(suiteName: String?, busAddress: String? = nil) {
        guard let suiteName else {
            self.init(applicationIdentifier: Self.defaultApplicationIdentifier, busAddress: busAddress)
            return
        }
        guard suiteName != Self.globalDomain, DomainName.problem(with: suiteName) == nil else { return nil }
        self.init(applicationIdentifier: suiteName, busAddress: busAddress)
    }

    deinit {
        // The session holds this object weakly and drops it by itself.
        let streams = local.withLock { $0.streams.values }
        for stream in streams { stream.finish() }
    }

    /// The executable's name, as the default application domain.
    static var defaultApplicationIdentifier: String {
        ProcessInfo.processInfo.processName
    }

    static func sanitized(_ identifier: String) -> DomainName {
        if let name = try? DomainName(identifier) { return name }
        var text = String(
            identifier.unicodeScalars.map { scalar -> Character in
                scalar.isASCII && (CharacterSet.alphanumerics.contains(scalar) || scalar == "." || scalar == "_" || scalar == "-")
                    ? Character(scalar) : "-"
            })
        while text.hasPrefix(".") || text.hasPrefix("-") { text.removeFirst() }
        // An identifier with nothing usable in it still gets a domain of its own, never the global one.
        return (try? DomainName(String(text.prefix(255)))) ?? (try? DomainName("unnamed.application")) ?? .global
    }

    /// The object's layers.
    var layers: Layers { local.withLock { $0.layers } }
}
