import ArgumentParser
import PreferencesModel
import PreferencesProxy

extension Prefs {
    /// `prefs volatile list|read|set|remove`: domains kept only in prefsd's memory.
    public struct Volatile: AsyncParsableCommand {
        /// The verb's name, sub-verbs and help.
        public static let configuration = CommandConfiguration(
            commandName: "volatile",
            abstract: "List, read, create and remove volatile domains (kept in memory only).",
            discussion: """
                Volatile domains live only while prefsd runs and are never written to disk. \
                One is set and removed whole: to change it, remove it and set it again. \
                `prefs write` and `prefs delete` change persistent domains only, even when a \
                volatile domain has the same name.

                Examples:
                  prefs volatile set com.example.Session '{ Token = abc; }'
                  prefs volatile list
                  prefs volatile read com.example.Session Token
                  prefs volatile remove com.example.Session
                """,
            subcommands: [List.self, Read.self, Set.self, Remove.self]
        )

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// `prefs volatile list`.
        public struct List: AsyncParsableCommand {
            /// The sub-verb's name and help.
            public static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List the volatile domains, one per line.")

            /// Creates the sub-verb.
            public init() {}

            /// Prints the names.
            public func run() async throws {
                let client = try connect()
                defer { client.close() }
                for name in try await client.perform(PreferencesCall.volatileDomains()) { Output.line(name) }
            }
        }

        /// `prefs volatile read DOMAIN [KEY]`.
        public struct Read: AsyncParsableCommand {
            /// The sub-verb's name and help.
            public static let configuration = CommandConfiguration(
                commandName: "read", abstract: "Print a volatile domain, or one of its keys.")

            /// Print JSON instead of old-style text.
            @Flag(name: .long, help: "Print JSON (dates as ISO 8601 strings, data as base64 strings).")
            public var json = false

            /// The volatile domain.
            @Argument(help: "The volatile domain.")
            public var domain: String

            /// The key, or none for the whole domain.
            @Argument(help: "The key; the whole domain when omitted.")
            public var key: String?

            /// Creates the sub-verb.
            public init() {}

            /// Reads and prints.
            public func run() async throws {
                let client = try connect()
                defer { client.close() }
                guard let entries = try await client.performIfPresent(PreferencesCall.readVolatileDomain(domain), domain: domain) else {
                    throw PrefsError.volatileNotFound(domain: domain, key: nil)
                }
                let value: PropertyListValue
                if let key {
                    guard let found = entries[PreferenceKey.normalized(key)] else { throw PrefsError.volatileNotFound(domain: domain, key: key) }
                    value = found
                } else {
                    value = .dictionary(entries)
                }
                Output.line(json ? OutputFormatter.json(value) : OutputFormatter.text(value))
            }
        }

        /// `prefs volatile set DOMAIN '{ … }'`.
        public struct Set: AsyncParsableCommand {
            /// The sub-verb's name and help.
            public static let configuration = CommandConfiguration(
                commandName: "set",
                abstract: "Create a volatile domain holding a dictionary.",
                discussion: "Exit status 7 when a volatile domain of that name exists (a persistent one does not matter).")

            /// The new domain's name.
            @Argument(help: "The new volatile domain.")
            public var domain: String

            /// The domain's contents as old-style text.
            @Argument(help: "Its keys and values as old-style text, like '{ Token = abc; }'.")
            public var contents: String = "{}"

            /// Creates the sub-verb.
            public init() {}

            /// Parses the dictionary and creates the domain.
            public func run() async throws {
                guard case .dictionary(let entries) = try? OpenStepPropertyList.parse(contents) else {
                    throw PrefsError.usage("\"\(contents)\" is not a dictionary like '{ Token = abc; }'")
                }
                let client = try connect()
                defer { client.close() }
                do {
                    try await client.perform(PreferencesCall.setVolatileDomain(domain, entries), domain: domain)
                } catch .exists {
                    throw PrefsError.exists(
                        domain: domain,
                        detail: "a volatile domain named \(domain) exists already; remove it first with `prefs volatile remove \(domain)`")
                }
            }
        }

        /// `prefs volatile remove DOMAIN`.
        public struct Remove: AsyncParsableCommand {
            /// The sub-verb's name and help.
            public static let configuration = CommandConfiguration(
                commandName: "remove", abstract: "Remove a volatile domain.")

            /// The volatile domain.
            @Argument(help: "The volatile domain.")
            public var domain: String

            /// Creates the sub-verb.
            public init() {}

            /// Removes it; exit status 1 when there is none of that name.
            public func run() async throws {
                let client = try connect()
                defer { client.close() }
                guard try await client.perform(PreferencesCall.volatileDomains()).contains(domain) else {
                    throw PrefsError.volatileNotFound(domain: domain, key: nil)
                }
                try await client.perform(PreferencesCall.removeVolatileDomain(domain), domain: domain)
            }
        }
    }
}
