import ArgumentParser
import PreferencesProxy

extension Prefs {
    /// `prefs delete DOMAIN [KEY]`.
    public struct Delete: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "delete",
            abstract: "Remove a key, or a whole domain.",
            discussion: """
                A domain or key that does not exist is an error (exit status 1). Deleting a \
                volatile domain removes it like `prefs volatile remove`.

                Examples:
                  prefs delete com.example.Editor FontSize
                  prefs delete com.example.Editor
                """
        )

        /// The domain.
        @Argument(help: "The domain (-g for the global domain).")
        public var domain: String

        /// The key, or none for the whole domain.
        @Argument(help: "The key; the whole domain when omitted.")
        public var key: String?

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Removes the key or the domain.
        public func run() async throws {
            let client = try connect()
            defer { client.close() }
            if let key {
                let (domain, key) = try await Self.locate(domain, key, client: client)
                do {
                    _ = try await client.perform(PreferencesCall.read(domain, key), domain: domain, key: key)  // NotFound when absent: exit 1
                } catch .invalid {
                    // A stored value prefsd cannot read (it breaks the store's rules): removable.
                }
                try await client.perform(PreferencesCall.remove(domain, key), domain: domain, key: key)
            } else if try await client.perform(PreferencesCall.domains()).contains(domain) {
                try await client.perform(PreferencesCall.removeDomain(domain), domain: domain)
            } else if try await client.perform(PreferencesCall.volatileDomains()).contains(domain) {
                try await client.perform(PreferencesCall.removeVolatileDomain(domain), domain: domain)
            } else {
                throw PrefsError.domainNotFound(domain)
            }
        }

        /// Where `key` of `domain` is: there, or, when `domain` is the ID of an installed
        /// GSettings schema and holds no such key, where the schema keeps it.
        static func locate(_ domain: String, _ key: String, client: PrefsClient) async throws(PrefsError) -> (domain: String, key: String) {
            guard let schema = SchemaDomain(domain), let location = schema.location(of: key) else { return (domain, key) }
            do {
                if try await client.readIfPresent(domain, key) != nil { return (domain, key) }
            } catch .invalid {
                return (domain, key)
            }
            return (location.domain, location.key)
        }
    }

    /// `prefs rename DOMAIN OLD NEW`.
    public struct Rename: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "rename",
            abstract: "Rename a key, keeping its value (one atomic change).",
            discussion: """
                Example:
                  prefs rename com.example.Editor FontSize TextSize
                """
        )

        /// The domain.
        @Argument(help: "The domain (-g for the global domain).")
        public var domain: String

        /// The key's current name.
        @Argument(help: "The key's current name.")
        public var oldKey: String

        /// The key's new name.
        @Argument(help: "The key's new name.")
        public var newKey: String

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Sets the new key and removes the old one in one `ApplyIf`, on condition that
        /// neither changed since they were read (retried when another writer got in between).
        public func run() async throws {
            let client = try connect()
            defer { client.close() }
            let (domain, oldKey, newKey) = (domain, oldKey, newKey)
            guard oldKey != newKey else {
                _ = try await client.perform(PreferencesCall.read(domain, oldKey), domain: domain, key: oldKey)
                return
            }
            try await client.update(domain, keys: [oldKey, newKey]) { current throws(PrefsError) in
                guard let value = current[oldKey] else { throw .keyNotFound(domain: domain, key: oldKey) }
                return PreferencesBatch(set: [newKey: value], remove: [oldKey])
            }
        }
    }
}
