import ArgumentParser
import Foundation
import GSettingsPaths
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
                The reverse of dconf-import: every key of a persistent domain that the \
                GSettings path rule reaches, under PATH, as GVariant text of the type the \
                installed schema declares for it (or, for keys no fixed-path schema \
                declares, such as a relocatable schema's, the type of tagged text, else the \
                plainest type of the value's shape). A value that does not fit its schema's \
                type (GSettings reads the default for it) is left out and named on standard \
                error.

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
                try DconfKeyfile.validate(directory: path)
            } catch {
                throw PrefsError.usage(error.description)
            }
            let client = try connect()
            defer { client.close() }
            let schemaTypes = InstalledSchemas.keyTypes()
            var entries: [DconfKeyfile.Entry] = []
            for domain in try await client.perform(PreferencesCall.domains()) {
                let directory = GSettingsPath.settingsPath(ofDomain: domain)
                guard directory.hasPrefix(path) || path.hasPrefix(directory) else { continue }
                let values = try await DconfSource.readDomain(domain, with: client)
                for (key, value) in values {
                    guard let location = GSettingsPath(domain: domain, key: key), location.settingsKey.hasPrefix(path) else { continue }
                    let type = schemaTypes[location.settingsKey] ?? GVariantText.inferredType(of: value)
                    guard let text = GVariantText.text(for: value, type: type) else {
                        Output.error("\(location.settingsKey) (\(domain) \(key)) left out: its value does not fit the type \(type) its schema declares")
                        continue
                    }
                    entries.append(DconfKeyfile.Entry(key: location.settingsKey, text: text))
                }
            }
            Output.write(Data(DconfKeyfile.render(entries, under: path).utf8))
        }
    }
}
