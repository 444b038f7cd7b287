import ArgumentParser
import Foundation
import PreferencesModel
import PreferencesProxy

extension Prefs {
    /// `prefs roaming enable|disable|status`.
    public struct Roaming: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "roaming",
            abstract: "Choose the domains that follow you across your machines, and see how roaming goes.",
            discussion: """
                prefsd writes this machine's changes of the chosen domains to a folder \
                ($XDG_DATA_HOME/prefsd/roaming by default) and applies the other machines' \
                changes it finds there. A file-sync engine such as Syncthing keeps the folder \
                the same on every machine (see the README). The choice is kept in the domain \
                io.github.prefsd.Roaming (keys Domains, ExcludedKeys, MachineName).

                Examples:
                  prefs roaming enable com.example.Editor --exclude 'Window*'
                  prefs roaming disable com.example.Editor
                  prefs roaming status
                """,
            subcommands: [Enable.self, Disable.self, Status.self]
        )

        /// Creates the verb.
        public init() {}

        static let domain = "io.github.prefsd.Roaming"
        static let statusDomain = "io.github.prefsd.Roaming.Status"

        /// Changes the selection atomically: reads it, then writes it back only if nobody
        /// changed it meanwhile (a few tries).
        static func update(
            _ client: PrefsClient, _ body: (inout [String], inout [String: PropertyListValue]) throws(PrefsError) -> Void
        ) async throws {
            for _ in 0..<5 {
                let current = (try? await client.perform(PreferencesCall.readDomain(domain), domain: domain)) ?? [:]
                var domains: [String] = []
                if case .array(let items)? = current["Domains"] {
                    domains = items.compactMap { if case .string(let name) = $0 { name } else { nil } }
                }
                var excluded: [String: PropertyListValue] = [:]
                if case .dictionary(let entries)? = current["ExcludedKeys"] { excluded = entries }
                try body(&domains, &excluded)
                var set: [String: PropertyListValue] = ["Domains": .array(domains.map { .string($0) })]
                var remove: [String] = []
                if excluded.isEmpty { if current["ExcludedKeys"] != nil { remove.append("ExcludedKeys") } } else { set["ExcludedKeys"] = .dictionary(excluded) }
                var expected: [String: PropertyListValue] = [:]
                var absent: [String] = []
                for key in ["Domains", "ExcludedKeys"] {
                    if let value = current[key] { expected[key] = value } else { absent.append(key) }
                }
                if try await client.perform(PreferencesCall.applyIf(domain, expected: expected, absent: absent, set: set, remove: remove), domain: domain) {
                    return
                }
            }
            throw PrefsError.storageFailed(detail: "the roaming choice kept changing under prefs; try again")
        }

        /// `prefs roaming enable DOMAIN [--exclude PATTERN]…`.
        public struct Enable: AsyncParsableCommand {
            /// The verb's name and help.
            public static let configuration = CommandConfiguration(
                abstract: "Make a domain roam, leaving out keys that match the patterns.",
                discussion: "Patterns use * (any run of characters) and ? (one character). Enabling a domain again replaces its patterns."
            )
            /// The domain.
            @Argument(help: "The domain that roams.") public var domain: String
            /// Key patterns left out.
            @Option(name: .customLong("exclude"), help: ArgumentHelp("A key pattern to leave out (repeatable).", valueName: "pattern"))
            public var exclude: [String] = []
            /// Creates the verb.
            public init() {}

            /// Adds the domain.
            public func run() async throws {
                guard (try? DomainName(domain)) != nil else { throw PrefsError.invalid(detail: "\"\(domain)\" is not a domain name") }
                guard !domain.hasPrefix("io.github.prefsd") else { throw PrefsError.invalid(detail: "prefsd's own domains never roam") }
                let client = try connect()
                defer { client.close() }
                try await Roaming.update(client) { domains, excluded throws(PrefsError) in
                    if !domains.contains(domain) { domains.append(domain) }
                    domains.sort()
                    excluded[domain] = exclude.isEmpty ? nil : .array(exclude.map { .string($0) })
                }
            }
        }

        /// `prefs roaming disable DOMAIN`.
        public struct Disable: AsyncParsableCommand {
            /// The verb's name and help.
            public static let configuration = CommandConfiguration(
                abstract: "Stop a domain from roaming (its values stay as they are on this machine)."
            )
            /// The domain.
            @Argument(help: "The domain.") public var domain: String
            /// Creates the verb.
            public init() {}

            /// Removes the domain.
            public func run() async throws {
                let client = try connect()
                defer { client.close() }
                try await Roaming.update(client) { domains, excluded throws(PrefsError) in
                    domains.removeAll { $0 == domain }
                    excluded[domain] = nil
                }
            }
        }

        /// `prefs roaming status [--json]`.
        public struct Status: AsyncParsableCommand {
            /// The verb's name and help.
            public static let configuration = CommandConfiguration(
                abstract: "Show this machine's name, the machines seen, what waits and which files were set aside."
            )
            /// Print JSON.
            @Flag(help: "Print the status as JSON.") public var json = false
            /// Creates the verb.
            public init() {}

            /// Prints the status prefsd shows in io.github.prefsd.Roaming.Status.
            public func run() async throws {
                let client = try connect()
                defer { client.close() }
                // prefsd answers but shows no status when nothing roams yet: no failure.
                guard let status = try await client.performIfPresent(PreferencesCall.readVolatileDomain(Roaming.statusDomain), domain: Roaming.statusDomain)
                else {
                    if json { return Output.line(OutputFormatter.json(.dictionary(["Roaming": .boolean(false)]))) }
                    return Output.line(
                        "no domain roams yet: `prefs roaming enable DOMAIN` starts (if one does, prefsd cannot read /etc/machine-id: see \(PreferencesProxyError.logLocation))"
                    )
                }
                if json { return Output.line(OutputFormatter.json(.dictionary(status))) }
                func text(_ key: String, in entries: [String: PropertyListValue]) -> String {
                    entries[key].map(OutputFormatter.text) ?? ""
                }
                Output.line("machine: \(text("MachineName", in: status)) (\(text("Machine", in: status)))")
                Output.line("folder: \(text("Folder", in: status))")
                if case .array(let domains)? = status["Domains"] {
                    Output.line("roaming domains: \(domains.isEmpty ? "none" : domains.map(OutputFormatter.text).joined(separator: ", "))")
                }
                Output.line("changes published: \(text("Published", in: status))")
                for (title, key, fields) in [
                    ("machines seen", "Machines", ["Name", "Machine", "LastChange", "Keys"]),
                    ("waiting", "Waiting", ["Domain", "Key", "Machine", "Reason"]),
                    ("set aside", "SetAside", ["File", "Reason", "Copy"]),
                ] {
                    guard case .array(let items)? = status[key] else { continue }
                    Output.line("\(title): \(items.isEmpty ? "none" : "")")
                    for case .dictionary(let entry) in items {
                        let parts = fields.compactMap { field -> String? in
                            guard let value = entry[field] else { return nil }
                            return (field == "Keys" ? "keys " : "") + OutputFormatter.text(value)
                        }
                        Output.line("  " + parts.joined(separator: "  "))
                    }
                }
                if case .array(let problems)? = status["Problems"], !problems.isEmpty {
                    Output.line("problems:")
                    for problem in problems { Output.line("  \(OutputFormatter.text(problem))") }
                }
            }
        }
    }
}
