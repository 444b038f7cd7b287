import ArgumentParser
import DconfFormats
import Foundation
import GSettingsPaths
import GSettingsSchemas
import GVariantCoding
import PreferencesModel
import PreferencesProxy

extension Prefs {
    /// `prefs dconf-export [PATH]`.
    public struct DconfExport: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "dconf-export",
            abstract: "Print prefsd's GSettings values under PATH as a keyfile `dconf load PATH` reads.",
            discussion: """
                The reverse of dconf-import: every key under PATH that an installed \
                GSettings schema describes (a fixed schema at its path, or a relocatable \
                one where it is used), as GVariant text of the type the schema declares. \
                Keys no schema describes (NSGlobalDomain, an application's own domains) \
                are not GSettings values: they are left out and counted on standard error. \
                A value that does not fit its schema's type (GSettings reads the default \
                for it) is left out and named on standard error.

                Example:
                  prefs dconf-export / > settings.ini; dconf load / < settings.ini
                """
        )

        /// The dconf directory.
        @Argument(help: "The dconf directory to export, starting and ending with /.")
        var path = "/"

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Reads the domains below PATH and prints the keyfile.
        public func run() async throws {
            do {
                try DconfPath.checkDirectory(path)
            } catch {
                throw PrefsError.usage(error.description)
            }
            let client = try connect()
            defer { client.close() }
            // Only keys an installed schema describes (a fixed schema's, or a relocatable
            // schema's where it is used): the keys GSettings programs keep in dconf. Others
            // (NSGlobalDomain, an application's own domain) dconf never held.
            let schemas = SchemaSource()
            var entries: [DconfKeyfile.Entry] = []
            var undescribed: [String: Int] = [:]
            for domain in try await client.perform(PreferencesCall.domains()) {
                let directory = GSettingsPath.settingsPath(ofDomain: domain)
                guard directory.hasPrefix(path) || path.hasPrefix(directory) else { continue }
                let values = try await DconfSource.readDomain(domain, with: client)
                var types: [String: String] = [:]
                for instance in schemas.instances(inDomain: domain, storedKeys: values.keys) {
                    for key in instance.schema.keys {
                        if let prefsdKey = instance.prefsdKey(key.name) { types[prefsdKey] = key.type }
                    }
                }
                for (key, value) in values.sorted(by: { $0.key < $1.key }) {
                    guard let location = GSettingsPath(domain: domain, key: key), location.settingsKey.hasPrefix(path) else { continue }
                    guard let type = types[key] else {
                        undescribed[domain, default: 0] += 1
                        continue
                    }
                    guard let text = GVariantText.text(for: value, type: type) else {
                        Output.error("\(location.settingsKey) (\(domain) \(key)) left out: its value does not fit the type \(type) its schema declares")
                        continue
                    }
                    entries.append(DconfKeyfile.Entry(key: location.settingsKey, text: text))
                }
            }
            if !undescribed.isEmpty {
                let count = undescribed.values.reduce(0, +)
                Output.error(
                    "left out \(count) key\(count == 1 ? "" : "s") no installed GSettings schema describes, which dconf never holds for a GSettings program (in \(undescribed.keys.sorted().joined(separator: ", ")))"
                )
            }
            Output.write(Data(DconfKeyfile.render(entries, under: path).utf8))
        }
    }
}
