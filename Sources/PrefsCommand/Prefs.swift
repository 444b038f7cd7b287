import ArgumentParser
import PreferencesModel

/// The `prefs` command: reads and writes the preferences prefsd serves, in the manner of
/// macOS `defaults` and `gsettings`.
public struct Prefs: AsyncParsableCommand {
    /// The command's name, verbs and help text.
    public static let configuration = CommandConfiguration(
        commandName: "prefs",
        abstract: "Read, write and watch the preferences prefsd serves on the session bus.",
        discussion: """
            Domains are reverse-DNS names like com.example.Editor; -g, -globalDomain and \
            NSGlobalDomain name the global domain. Values print as old-style property-list \
            text, the way macOS `defaults` prints them; --json prints JSON instead (dates \
            as ISO 8601 strings, data as base64 strings). If prefsd is not running, the \
            session bus starts it.

            Examples:
              prefs write com.example.Editor FontSize -int 14
              prefs read com.example.Editor FontSize
              prefs read -g
              prefs monitor com.example.Editor

            Exit status:
            \(exitCodeTable)

            Shell completion: prefs --generate-completion-script bash (or zsh, fish).
            """,
        version: PrefsdVersion.current,
        subcommands: [
            Read.self, ReadType.self, Write.self, Delete.self, Rename.self, Domains.self, Find.self,
            Export.self, Import.self, Monitor.self, IsForced.self, Volatile.self, DconfImport.self, DconfExport.self,
            DconfSwitch.self, DconfSwitchBack.self, XfconfSwitch.self, XfconfSwitchBack.self,
            History.self, Undo.self, Restore.self, Roaming.self, GSettingsCommand.self, DconfCheck.self,
        ]
    )

    /// The exit statuses, one per line, for help texts; a long summary goes on over
    /// indented lines, so that an 80-column terminal (where ArgumentParser wraps help
    /// text) never breaks it back to the margin.
    public static var exitCodeTable: String {
        PrefsExitCode.allCases.map { code in
            let number = String(code.rawValue)
            let lead = "  " + number + String(repeating: " ", count: max(1, 4 - number.count))
            var lines = [lead]
            for word in code.summary.split(separator: " ") {
                if lines[lines.count - 1].count + 1 + word.count > 78, lines[lines.count - 1].count > lead.count {
                    lines.append(String(repeating: " ", count: lead.count))
                }
                let line = lines[lines.count - 1]
                lines[lines.count - 1] = line + (line.count > lead.count ? " " : "") + word
            }
            return lines.joined(separator: "\n")
        }.joined(separator: "\n")
    }

    /// The verbs `prefs` takes as its first word: each subcommand's name and aliases, and
    /// `help`.
    static var verbs: [String] {
        configuration.subcommands.flatMap { [$0._commandName] + $0.configuration.aliases } + ["help"]
    }

    /// Creates the command (ArgumentParser fills in its options).
    public init() {}

    /// Parses `arguments` (without the program name), runs the verb, prints any error as
    /// one line on standard error, and returns the exit status.
    public static func execute(arguments: [String]) async -> Int32 {
        let normalized = ArgumentNormalizer.normalize(arguments)
        // The verb, or the verb `help` is asked about: an unknown one is a usage error.
        let verb = normalized.first == "help" ? normalized.dropFirst().first : normalized.first
        if let word = verb, !word.hasPrefix("-"), !verbs.contains(word) {
            let near = verbs.filter { $0.hasPrefix(word) || word.hasPrefix($0) }
            let hint = near.count == 1 ? "did you mean '\(near[0])'? " : ""
            Output.error(PrefsError.usage("'\(word)' is not a verb of prefs; \(hint)the verbs are \(verbs.joined(separator: ", "))").description)
            return PrefsExitCode.usage.rawValue
        }
        do {
            var command = try parseAsRoot(normalized)
            if var asyncCommand = command as? any AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
            return PrefsExitCode.success.rawValue
        } catch let error as PrefsError {
            Output.error(error.description)
            return error.exitCode.rawValue
        } catch {
            return report(error)
        }
    }

    /// Prints what ArgumentParser has to say about `error` (help, version, completion
    /// script, or a usage error) and returns its exit status, with usage errors as 2.
    private static func report(_ error: any Error) -> Int32 {
        let code = exitCode(for: error)
        let message = fullMessage(for: error)
        if code == .success {
            if !message.isEmpty { Output.line(message) }
            return PrefsExitCode.success.rawValue
        }
        if code == .validationFailure {
            Output.errorText(message.hasSuffix("\n") ? message : message + "\n")
            return PrefsExitCode.usage.rawValue
        }
        if !message.isEmpty { Output.error(message) }
        return code.rawValue
    }
}

/// Helpers every verb shares.
extension AsyncParsableCommand {
    /// A client on the session bus, closed by the caller.
    func connect() throws(PrefsError) -> PrefsClient {
        try PrefsClient.connectToSessionBus()
    }
}
