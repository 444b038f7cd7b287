import ArgumentParser
import Foundation
import PreferencesModel
import PreferencesProxy

extension Prefs {
    /// `prefs domains`.
    public struct Domains: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "domains",
            abstract: "List the persistent domains, one per line.",
            discussion: """
                The domains you stored keys in, then those only an administrator sets \
                values in (managed files, defaults, dconf system databases), each marked \
                "(administrator only)": `prefs read` shows their values too. Volatile \
                domains are listed by `prefs volatile list`.

                Example:
                  prefs domains
                """
        )

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Prints the names.
        public func run() async throws {
            let client = try connect()
            defer { client.close() }
            let stored = try await client.perform(PreferencesCall.domains())
            for name in stored { Output.line(name) }
            for name in try await client.perform(PreferencesCall.administeredDomains()) where !stored.contains(name) {
                Output.line("\(name) (administrator only)")
            }
        }
    }

    /// `prefs find WORD`.
    public struct Find: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "find",
            abstract: "Search every domain's name, keys and values for a word.",
            discussion: """
                The search ignores case. A domain whose name contains the word is printed \
                whole; otherwise the keys whose name or value (strings inside arrays and \
                dictionaries too) contains it. Volatile domains are searched as well. Exit \
                status 1 when nothing is found, as grep does.

                Example:
                  prefs find Menlo
                """
        )

        /// The word to look for.
        @Argument(help: "The word to look for (case is ignored).")
        public var word: String

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Searches and prints what matched.
        public func run() async throws {
            let client = try connect()
            defer { client.close() }
            // Persistent and volatile domains are two namespaces: one name may be both.
            var found = false
            for volatile in [false, true] {
                let names = volatile ? try await client.perform(PreferencesCall.volatileDomains()) : try await client.perform(PreferencesCall.domains())
                for name in names {
                    guard let entries = try await Self.entries(of: name, volatile: volatile, client: client) else { continue }
                    let matches = Self.matches(word, domain: name, entries: entries)
                    guard !matches.isEmpty else { continue }
                    found = true
                    let kind = volatile ? "volatile domain" : "domain"
                    Output.line(
                        "Found \(matches.count) \(matches.count == 1 ? "key" : "keys") in \(kind) '\(name)': \(OpenStepPropertyList.describe(.dictionary(matches)))"
                    )
                }
            }
            if !found { throw PrefsError.nothingFound(word) }
        }

        /// A domain's entries, or `nil` when it went away since it was listed.
        private static func entries(of name: String, volatile: Bool, client: PrefsClient) async throws(PrefsError) -> [String: PropertyListValue]? {
            do {
                return try await client.perform(volatile ? PreferencesCall.readVolatileDomain(name) : PreferencesCall.readDomain(name), domain: name)
            } catch .domainNotFound {
                return nil
            }
        }

        /// The entries of `domain` that match `word`: all of them when the domain's name does.
        public static func matches(_ word: String, domain: String, entries: [String: PropertyListValue]) -> [String: PropertyListValue] {
            if contains(domain, word) { return entries }
            return entries.filter { contains($0.key, word) || contains($0.value, word) }
        }

        private static func contains(_ text: String, _ word: String) -> Bool {
            text.range(of: word, options: [.caseInsensitive]) != nil
        }

        private static func contains(_ value: PropertyListValue, _ word: String) -> Bool {
            switch value {
            case .string(let text): contains(text, word)
            case .array(let items): items.contains { contains($0, word) }
            case .dictionary(let entries): entries.contains { contains($0.key, word) || contains($0.value, word) }
            default: contains(OutputFormatter.text(value), word)
            }
        }
    }

    /// `prefs is-forced DOMAIN KEY`.
    public struct IsForced: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "is-forced",
            abstract: "Print true when an administrator forces a key, else false.",
            discussion: """
                Forced keys come from managed domains (/etc/prefsd/managed/DOMAIN.plist); \
                writing or deleting them fails with exit status 3.

                Example:
                  prefs is-forced com.example.Editor FontSize
                """
        )

        /// The domain.
        @Argument(help: "The domain (-g for the global domain).")
        public var domain: String

        /// The key.
        @Argument(help: "The key.")
        public var key: String

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Asks and prints.
        public func run() async throws {
            let client = try connect()
            defer { client.close() }
            Output.line(try await client.perform(PreferencesCall.isForced(domain, key), domain: domain, key: key) ? "true" : "false")
        }
    }
}
