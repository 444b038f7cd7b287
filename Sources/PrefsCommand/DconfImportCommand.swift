import ArgumentParser
import DconfFormats
import Foundation
import GSettingsSchemas
import PreferencesModel
import PreferencesProxy

extension Prefs {
    /// `prefs dconf-import [--dry-run] [--from FILE] [PATH]`.
    public struct DconfImport: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "dconf-import",
            abstract: "Copy the user's dconf values under PATH into prefsd, where the GSettings backend keeps them.",
            discussion: """
                Reads `dconf dump PATH` (or --from FILE, a keyfile `dconf dump PATH` \
                printed) and stores each key in the domain and key the GSettings backend \
                uses (the README's path rule), as that backend stores its GVariant, so that \
                `gsettings get` under GSETTINGS_BACKEND=prefsd answers what it answered \
                under dconf. One atomic Apply per domain, only of the keys that differ: \
                running it twice changes nothing. Keys prefsd holds that dconf does not are \
                left alone. When a key cannot be represented, each such key is named with \
                the reason and nothing at all is written (exit status 5). A value of another \
                type than its installed schema declares (GSettings reads the default for \
                it) is left out and named on standard error. Prints one line \
                per domain. If prefsd refuses a domain (a value past its limits), that \
                domain stays as it was and the import stops there; the domains listed \
                before it were applied.

                Examples:
                  prefs dconf-import --dry-run
                  prefs dconf-import /org/gnome/desktop/
                  dconf dump / > saved.ini; prefs dconf-import --from saved.ini
                """
        )

        /// Only say what would be written.
        @Flag(name: .long, help: "Print what would be written, and write nothing.")
        var dryRun = false

        /// A keyfile to read instead of the running dconf.
        @Option(name: .long, help: ArgumentHelp("A keyfile printed by `dconf dump PATH` (- for standard input).", valueName: "file"))
        var from: String?

        /// The dconf directory.
        @Argument(help: "The dconf directory to copy, starting and ending with /.")
        var path = "/"

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Converts everything, then applies each domain's changes.
        public func run() async throws {
            let contents: String
            do {
                try DconfPath.checkDirectory(path)
            } catch {
                throw PrefsError.usage(error.description)
            }
            if let from {
                contents = try DconfSource.text(try PropertyListFiles.read(from), source: from)
            } else {
                contents = try DconfSource.dump(path)
            }
            let entries: [DconfKeyfile.Entry]
            do {
                entries = try DconfKeyfile.entries(contents, under: path)
            } catch {
                throw PrefsError.invalid(detail: "\(from ?? "dconf dump \(path)"): \(error.description)")
            }
            let (values, problems, ignored) = DconfSource.values(of: entries, schemaTypes: SchemaSource().fixedKeyTypes)
            for note in ignored { Output.error(note) }
            guard problems.isEmpty else {
                for problem in problems { Output.error(problem) }
                throw PrefsError.invalid(
                    detail: "\(problems.count) of \(entries.count) dconf keys cannot be represented in prefsd (above); nothing was imported")
            }
            let client = try connect()
            defer { client.close() }
            for domain in values.keys.sorted() {
                let wanted = values[domain, default: [:]]
                let current = try await DconfSource.readDomain(domain, with: client)
                let changed = wanted.filter { current[$0.key] != $0.value }
                let unchanged = wanted.count - changed.count
                if changed.isEmpty {
                    Output.line("\(domain): \(Self.count(wanted.count)), all already in prefsd")
                } else if dryRun {
                    Output.line("\(domain): would set \(changed.count) of \(Self.count(wanted.count)) (\(unchanged) already in prefsd)")
                } else {
                    _ = try await client.perform(PreferencesCall.apply(domain, set: changed, remove: []), domain: domain)
                    Output.line("\(domain): set \(changed.count) of \(Self.count(wanted.count)) (\(unchanged) already in prefsd)")
                }
            }
        }

        private static func count(_ number: Int) -> String {
            number == 1 ? "1 key" : "\(number) keys"
        }
    }
}
