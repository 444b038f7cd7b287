import ArgumentParser
import PreferencesModel
import PreferencesProxy

extension Prefs {
    /// `prefs write DOMAIN KEY VALUE` and `prefs write DOMAIN '{ … }'`.
    public struct Write: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "write",
            abstract: "Set a key, or replace a whole domain.",
            discussion: """
                VALUE is old-style property-list text ('(a, b)', '{ k = v; }', <0aff>); text \
                that does not parse as one is stored as a string. Old-style text has no numbers: \
                give a type flag for anything but strings:
                  -string S, -int[eger] N, -float X, -bool[ean] true|false|yes|no,
                  -date '2024-05-01 12:00:00 +0000' (or ISO 8601, or 2024-05-01), -data HEX,
                  -array ITEM..., -array-add ITEM..., -dict KEY ITEM..., -dict-add KEY ITEM...
                Each ITEM is a plain value or a scalar type flag and its value. -array-add and \
                -dict-add append to the current array or merge into the current dictionary \
                (creating it when the key is absent). With only a dictionary after DOMAIN, the \
                whole domain is replaced by it.

                Examples:
                  prefs write com.example.Editor FontSize -int 14
                  prefs write com.example.Editor ShowRuler -bool yes
                  prefs write com.example.Editor Recent -array a.txt b.txt
                  prefs write com.example.Editor Recent -array-add c.txt
                  prefs write com.example.Editor Colors -dict-add Background -string black
                  prefs write -g AppleLanguages '(en, fr)'
                  prefs write com.example.Editor '{ FontSize = <*I12>; Theme = dark; }'
                """
        )

        /// Write to a domain named like an installed GSettings schema all the same.
        @Flag(help: "Write to DOMAIN even when it is an installed GSettings schema's ID (no GSettings program reads it).")
        public var notASchema = false

        /// The domain.
        @Argument(help: "The domain (-g for the global domain).")
        public var domain: String

        /// The key and value (with type flags), or a dictionary for the whole domain.
        @Argument(
            parsing: .captureForPassthrough,
            help: ArgumentHelp("KEY and VALUE (with type flags), or '{ ... }' to replace the domain.", valueName: "key-and-value"))
        public var values: [String] = []

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Shows the help when it is asked for where a key would be (the trailing
        /// arguments are captured raw, so ArgumentParser does not see `--help` there).
        public func validate() throws {
            if let first = values.first, ["--help", "-h", "-help"].contains(first) {
                throw CleanExit.helpRequest(self)
            }
        }

        /// Parses the value and writes it.
        public func run() async throws {
            let request = try ValueParser.parseWrite(values)
            let domain = domain
            let client = try connect()
            defer { client.close() }
            // A GSettings schema's ID is the natural mistake for a domain: never create a
            // domain of that name unasked, say where the key lives instead.
            if !notASchema, let schema = SchemaDomain(domain), try await client.performIfPresent(PreferencesCall.readDomain(domain), domain: domain) == nil {
                throw schema.writeRefusal(key: request.key)
            }
            switch request {
            case .replaceDomain(let entries):
                try await client.perform(PreferencesCall.replaceDomain(domain, entries), domain: domain)
            case .set(let key, let value):
                try await client.perform(PreferencesCall.write(domain, key, value), domain: domain, key: key)
            case .arrayAdd(let key, let items):
                // Read, append, and ApplyIf the value is still the one read: a concurrent
                // writer of the key is never overwritten unseen (retried instead).
                try await client.update(domain, keys: [key]) { current throws(PrefsError) in
                    switch current[key] {
                    case nil: return PreferencesBatch(set: [key: .array(items)])
                    case .array(let list)?: return PreferencesBatch(set: [key: .array(list + items)])
                    case let other?:
                        throw .invalid(
                            detail:
                                "the value of \"\(key)\" in \(domain) is a \(other.typeName), not an array; -array-add cannot append to it (use -array to replace it)"
                        )
                    }
                }
            case .dictAdd(let key, let entries):
                try await client.update(domain, keys: [key]) { current throws(PrefsError) in
                    switch current[key] {
                    case nil: return PreferencesBatch(set: [key: .dictionary(entries)])
                    case .dictionary(let dictionary)?: return PreferencesBatch(set: [key: .dictionary(dictionary.merging(entries) { $1 })])
                    case let other?:
                        throw .invalid(
                            detail:
                                "the value of \"\(key)\" in \(domain) is a \(other.typeName), not a dictionary; -dict-add cannot merge into it (use -dict to replace it)"
                        )
                    }
                }
            }
        }
    }
}
