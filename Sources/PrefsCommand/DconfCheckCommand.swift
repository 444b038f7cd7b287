import ArgumentParser
import Dconf
import Foundation
import GSettingsSchemas

extension Prefs {
    /// `prefs dconf-check [DIR…]`.
    public struct DconfCheck: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "dconf-check",
            abstract: "Check dconf's system databases against the installed GSettings schemas.",
            discussion: """
                Reads each keyfile directory (a system database's NAME.d, as `dconf update` \
                reads it: its keyfiles, and the files of its locks/ folder) and judges every \
                value and lock as GSettings on dconf reads them: a value must be GVariant \
                text of its key's own type that the schema takes (its range, its choices), \
                else GSettings ignores it, silently, and reads the default. Prints one line \
                for each value or lock GSettings would ignore, FILE:LINE: the key, what was \
                written, what the schema wants, and the line that would work, then a \
                summary. Keys no installed schema has are named too. Without DIR, checks the \
                system databases of the dconf profile ($DCONF_PROFILE, else \
                /etc/dconf/profile/user): /etc/dconf/db/NAME.d for each system-db:NAME line.

                With --store, checks instead the values prefsd stores (read over its \
                interface) for the keys an installed schema describes: a value the key \
                cannot hold (an older prefsd, a take-in of dconf's database, another \
                machine's value or an earlier schema put it there; GSettings reads the \
                default for it), and a value dconf's file of the user database gives with \
                another type than the schema's (GSettings on dconf reads the default for \
                it), each with how to mend it.

                Exit status: 0 when GSettings reads everything, 1 when it would ignore \
                anything, 74 when a directory cannot be read.

                Example: with idle-delay=60 under [org/gnome/desktop/session] in \
                /etc/dconf/db/local.d/00-screensaver (an int32 for a uint32 key), \
                `prefs dconf-check /etc/dconf/db/local.d` names the file and line, says \
                that GSettings reads the default (uint32 300) instead, and that \
                idle-delay=uint32 60 would work; it exits 1.
                """
        )

        /// The keyfile directories.
        @Argument(help: ArgumentHelp("Keyfile directories of dconf system databases (default: the profile's, /etc/dconf/db/NAME.d).", valueName: "dir"))
        var directories: [String] = []

        /// Whether to check prefsd's stored values instead.
        @Flag(help: "Check the values prefsd stores against the installed schemas instead of keyfile directories.")
        var store = false

        /// Creates the verb (ArgumentParser fills in its arguments).
        public init() {}

        /// Checks each directory, prints what GSettings would ignore, and ends with status 1
        /// when there is anything.
        public func run() async throws {
            if store {
                guard directories.isEmpty else { throw PrefsError.usage("--store checks prefsd's stored values: give no directory with it") }
                return try await checkStore()
            }
            let databases = try directories.isEmpty ? Self.profileDatabases() : directories.map { DconfSystemDatabase(path: $0) }
            if databases.isEmpty {
                Output.line("the dconf profile names no system database (system-db:NAME); give the keyfile directories to check")
                return
            }
            let check = KeyfileCheck(schemas: SchemaSource())
            var total = KeyfileCheck.Result()
            var files = 0
            for database in databases {
                var isDirectory: ObjCBool = false
                guard FileManager.default.fileExists(atPath: database.path, isDirectory: &isDirectory), isDirectory.boolValue else {
                    // The profile may name a database with no keyfiles (dconf reads its
                    // compiled file alone); a directory given must be one.
                    guard directories.isEmpty else {
                        throw PrefsError.file(path: database.path, reason: "it is not a directory of dconf keyfiles")
                    }
                    Output.error("\(database.path): no such directory; the profile's database has no keyfiles to check")
                    continue
                }
                let keyfiles = try database.keyfiles.map(Self.read)
                let locks = try database.lockFiles.map(Self.read)
                files += keyfiles.count + locks.count
                let result = check.check(keyfiles: keyfiles, locks: locks)
                for finding in result.findings { Output.line("\(finding.file):\(finding.line): \(finding.message)") }
                total.values += result.values
                total.locks += result.locks
                total.findings += result.findings
            }
            let checked = "\(Self.count(total.values, "value")) and \(Self.count(total.locks, "lock")) in \(Self.count(files, "file"))"
            guard total.findings.isEmpty else {
                Output.line("GSettings would ignore \(Self.count(total.findings.count, "line")) of \(checked)")
                throw ExitCode(1)
            }
            Output.line("GSettings reads every one of \(checked)")
        }

        /// The system databases of the dconf profile in force, as dconf finds it.
        private static func profileDatabases() throws -> [DconfSystemDatabase] {
            guard let path = DconfProfile.locate(explicit: nil, environment: ProcessInfo.processInfo.environment),
                let data = FileManager.default.contents(atPath: path)
            else { return [] }
            let profile = DconfProfile.parse(String(decoding: data, as: UTF8.self), path: path) { line, message in
                Output.error("\(path):\(line): \(message)")
            }
            return profile.systemDatabases.map { DconfSystemDatabase(name: $0, in: DconfSystemDatabase.defaultDirectory) }
        }

        /// The file at `path`.
        private static func read(_ path: String) throws -> KeyfileCheck.File {
            guard let data = FileManager.default.contents(atPath: path) else {
                throw PrefsError.file(path: path, reason: "it cannot be read")
            }
            return KeyfileCheck.File(path: path, bytes: Array(data))
        }

        private static func count(_ number: Int, _ noun: String) -> String {
            number == 1 ? "1 \(noun)" : "\(number) \(noun)s"
        }
    }
}
