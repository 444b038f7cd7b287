import PreferencesModel
import PreferencesProxy

/// `prefs`'s link to prefsd: the proxy on a private connection to the session bus, with
/// every ``PreferencesProxyError`` turned into a ``PrefsError`` that names the domain and
/// key involved and carries its exit status.
///
/// Calls let the bus start prefsd when it is not running (D-Bus activation).
public struct PrefsClient: Sendable {
    /// The proxy the calls go through.
    public let proxy: PreferencesProxy

    /// A client over a proxy.
    public init(proxy: PreferencesProxy) {
        self.proxy = proxy
    }

    /// Connects to the session bus named by `DBUS_SESSION_BUS_ADDRESS`.
    /// - Throws: ``PrefsError/noBus(detail:)`` when there is none or it cannot be reached.
    public static func connectToSessionBus() throws(PrefsError) -> PrefsClient {
        do {
            return PrefsClient(proxy: try PreferencesProxy.connect())
        } catch {
            // From a checkout, `make run` prints the lines that give a terminal its bus. The
            // bus's message is whole sentences: the hint is one more.
            let reason = error.description.hasSuffix(".") ? error.description : error.description + "."
            throw .noBus(detail: reason + " After `make run`, paste the `export` lines it printed into this terminal.")
        }
    }

    /// Ends subscriptions and closes the connection.
    public func close() {
        proxy.close()
    }

    /// Sends one request of ``PreferencesCall`` about `domain` (and `key`).
    public func perform<Reply>(_ request: PreferencesRequest<Reply>, domain: String? = nil, key: String? = nil) async throws(PrefsError) -> Reply {
        do {
            return try await proxy.perform(request)
        } catch {
            throw Self.map(error, domain: domain, key: key)
        }
    }

    /// ``perform(_:domain:key:)``, with `nil` when the domain (or key) does not exist.
    public func performIfPresent<Reply>(_ request: PreferencesRequest<Reply>, domain: String, key: String? = nil) async throws(PrefsError) -> Reply? {
        do {
            return try await perform(request, domain: domain, key: key)
        } catch .keyNotFound, .domainNotFound {
            return nil
        }
    }

    /// `Read`, with `nil` for a key (or domain) that does not exist.
    public func readIfPresent(_ domain: String, _ key: String) async throws(PrefsError) -> PropertyListValue? {
        try await performIfPresent(PreferencesCall.read(domain, key), domain: domain, key: key)
    }

    /// An atomic read-modify-write of `keys` (``PreferencesProxy/update(_:keys:attempts:_:)``):
    /// `compute` sees their current values and answers the batch, applied with `ApplyIf`
    /// only if they did not change meanwhile, retried otherwise.
    public func update(
        _ domain: String, keys: [String], _ compute: ([String: PropertyListValue]) throws(PrefsError) -> PreferencesBatch
    ) async throws(PrefsError) {
        do {
            try await proxy.update(domain, keys: keys) { current in try compute(current) }
        } catch let error as PrefsError {
            throw error
        } catch let error as PreferencesProxyError {
            throw Self.map(error, domain: domain, key: keys.first)
        } catch {
            throw .unexpectedReply("\(error)")
        }
    }

    /// The ``PrefsError`` for a failed call about `domain` (and `key`).
    static func map(_ error: PreferencesProxyError, domain: String?, key: String?) -> PrefsError {
        switch error {
        case .refused:
            guard let refusal = error.refusal else { return .unexpectedReply(error.description) }
            let detail = refusal.message
            switch refusal {
            case .notFound:
                if let domain, let key { return .keyNotFound(domain: domain, key: key) }
                if let domain { return .domainNotFound(domain) }
                return .unexpectedReply(detail)
            case .forced: return .forced(domain: domain ?? "the domain", detail: detail)
            case .exists: return .exists(domain: domain ?? "", detail: detail)
            case .quotaExceeded: return .quotaExceeded(detail: detail)
            case .storageFailed: return .storageFailed(detail: detail)
            default:
                // An invalid name, value or argument, a domain a sandboxed caller may not
                // touch, or a refusal a newer prefsd added: the caller's input, as prefsd says.
                return .invalid(detail: detail)
            }
        case .invalidRequest:
            return .invalid(detail: error.description)
        case .limitsExceeded: return .quotaExceeded(detail: error.message)
        case .serviceUnavailable: return .serviceUnavailable(detail: error.description)
        case .contended: return .serviceUnavailable(detail: error.message)
        case .unexpectedReply: return .unexpectedReply(error.message)
        default:
            // Another bus error, or a failure a newer proxy added.
            return .unexpectedReply(error.description)
        }
    }
}
