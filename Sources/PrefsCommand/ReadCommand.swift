import ArgumentParser
import PreferencesModel
import PreferencesProxy

extension Prefs {
    /// `prefs read [DOMAIN [KEY]]`.
    public struct Read: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "read",
            abstract: "Print a key, a whole domain, or every domain.",
            discussion: """
                Without arguments every persistent domain is printed; with a domain, all its \
                keys; with a key, its value. Strings and dates print bare (dates like \
                2024-05-01 12:00:00 +0000), booleans as 1 or 0, data as {length = N, bytes = 0x...}. \
                --json prints JSON: dates as ISO 8601 strings, data as base64 strings.

                Examples:
                  prefs read com.example.Editor FontSize
                  prefs read com.example.Editor
                  prefs read -g AppleLanguages
                  prefs read --json com.example.Editor
                """
        )

        /// Print JSON instead of old-style text.
        @Flag(name: .long, help: "Print JSON (dates as ISO 8601 strings, data as base64 strings).")
        public var json = false

        /// The domain, or none for every domain.
        @Argument(help: "The domain (-g for the global domain); all domains when omitted.")
        public var domain: String?

        /// The key, or none for the whole domain.
        @Argument(help: "The key; the whole domain when omitted.")
        public var key: String?

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Reads and prints.
        public func run() async throws {
            let client = try connect()
            defer { client.close() }
            let value: PropertyListValue
            // A GSettings schema's ID given as the domain reads through the schema.
            if let domain, let key {
                value = try await client.perform(PreferencesCall.read(domain, key), domain: domain, key: key) { schema throws(PrefsError) in
                    try await schema.read(key, with: client)
                }
            } else if let domain {
                value = .dictionary(
                    try await client.perform(PreferencesCall.readDomain(domain), domain: domain, key: nil) { schema throws(PrefsError) in
                        try await schema.readAll(with: client)
                    })
            } else {
                var all: [String: PropertyListValue] = [:]
                for name in try await client.perform(PreferencesCall.domains()) {
                    do {
                        all[name] = .dictionary(try await client.perform(PreferencesCall.readDomain(name), domain: name))
                    } catch .domainNotFound {
                        continue  // removed since Domains answered
                    }
                }
                value = .dictionary(all)
            }
            Output.line(json ? OutputFormatter.json(value) : OutputFormatter.text(value))
        }
    }

    /// `prefs read-type DOMAIN KEY`.
    public struct ReadType: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "read-type",
            abstract: "Print the type of a key's value.",
            discussion: """
                Prints "Type is string", integer, float, boolean, data, date, array or dictionary.

                Example:
                  prefs read-type com.example.Editor FontSize     # Type is integer
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

        /// Reads and prints the type.
        public func run() async throws {
            let client = try connect()
            defer { client.close() }
            Output.line("Type is \(try await client.perform(PreferencesCall.read(domain, key), domain: domain, key: key).typeName)")
        }
    }
}
