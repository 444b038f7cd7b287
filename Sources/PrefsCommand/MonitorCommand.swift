import ArgumentParser
import Dispatch
import PreferencesModel
import PreferencesProxy

#if canImport(Glibc)
    import Glibc
#endif

extension Prefs {
    /// `prefs monitor [DOMAIN…]`.
    public struct Monitor: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "monitor",
            abstract: "Print one line per change as it happens, until interrupted.",
            discussion: """
                Watches the given domains, or every domain when none is given, persistent \
                and volatile. Each committed change prints one line, flushed at once:
                  com.example.Editor: FontSize = 14; Theme = dark; removed Recent
                  com.example.Session (volatile): Token = abc
                --json prints one JSON object per line instead:
                  {"domain":"com.example.Editor","changed":{"FontSize":14},"removed":[]}
                (with "volatile":true for a volatile domain's change).
                Stops with status 0 on SIGINT (Ctrl-C) or SIGTERM; with 69 if the bus goes away.

                Examples:
                  prefs monitor com.example.Editor
                  prefs monitor -g com.example.Editor
                  prefs monitor --json
                """
        )

        /// Print JSON lines instead of text.
        @Flag(name: .long, help: "Print one JSON object per change.")
        public var json = false

        /// The domains to watch; every domain when empty.
        @Argument(help: "The domains to watch (-g for the global domain); every domain when omitted.")
        public var domains: [String] = []

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        private enum Ending: Sendable {
            case interrupted
            case disconnected
        }

        /// Subscribes, prints changes, and returns when interrupted.
        public func run() async throws {
            for domain in domains {
                do {
                    _ = try DomainName(domain)
                } catch {
                    throw PrefsError.invalid(detail: error.description)
                }
            }
            let client = try connect()
            defer { client.close() }
            let (endings, ending) = AsyncStream<Ending>.makeStream()
            signal(SIGINT, SIG_IGN)
            signal(SIGTERM, SIG_IGN)
            let sources = [SIGINT, SIGTERM].map { number in
                let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
                source.setEventHandler { ending.yield(.interrupted) }
                source.resume()
                return source
            }
            defer { for source in sources { source.cancel() } }

            // The proxy accepts changes only from prefsd itself and re-reads the keys a
            // change left out, so every line is complete.
            let json = json
            let subscription: PreferencesSubscription
            do {
                subscription = try await client.proxy.observe(domains.isEmpty ? nil : domains) { event in
                    switch event {
                    case .changed(let change):
                        Output.line(
                            json
                                ? OutputFormatter.changeJSON(domain: change.domain, changed: change.changed, removed: change.removed)
                                : OutputFormatter.changeLine(domain: change.domain, changed: change.changed, removed: change.removed))
                    case .volatileChanged(let change):
                        Output.line(
                            json
                                ? OutputFormatter.changeJSON(domain: change.domain, changed: change.changed, removed: change.removed, volatile: true)
                                : OutputFormatter.changeLine(domain: change.domain, changed: change.changed, removed: change.removed, volatile: true))
                    case .reloadNeeded(_, let reason):
                        Output.error(reason)
                    case .disconnected:
                        ending.yield(.disconnected)
                    case .forcedKeysChanged, .ownerChanged:
                        break
                    }
                }
            } catch {
                throw PrefsClient.map(error, domain: nil, key: nil)
            }
            defer { subscription.cancel() }
            // Subscribing asks nothing of prefsd: ask it once, so that a prefsd that cannot
            // be reached or started is reported at once (exit 69), not waited for in silence.
            _ = try await client.perform(PreferencesCall.version())
            for await reason in endings {
                switch reason {
                case .interrupted: return
                case .disconnected: throw PrefsError.noBus(detail: "the session bus went away; monitoring stopped")
                }
            }
        }
    }
}
