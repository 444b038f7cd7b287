import CGIO
import Foundation

/// What `prefs gsettings` prints, as gsettings prints it: through GLib's `g_print` and
/// `g_printerr` (text in the locale's character set), its messages in GLib's own words and
/// translations (the `glib20` text domain gsettings uses), with `prefs gsettings` where
/// gsettings names itself.
enum GSettingsText {
    /// Sets the locale from the environment, as gsettings does at its start: GLib's messages,
    /// the schemas' summaries and descriptions, and the character set of what is printed
    /// follow it.
    static func useLocale() {
        setlocale(LC_ALL, "")
        prefsd_text_domain_in_utf8(domain)
    }

    /// GLib's text domain, which holds gsettings' messages.
    private static let domain = "glib20"

    /// Prints `text` on standard output.
    static func print(_ text: String) {
        prefsd_print(text)
    }

    /// Prints `text` on standard error.
    static func printError(_ text: String) {
        prefsd_printerr(text)
    }

    /// gsettings' message `message` (its English text, a C format) in the locale's language,
    /// each `%s` (or `%N$s`) replaced by the next of `arguments`.
    static func message(_ message: String, _ arguments: String...) -> String {
        self.message(message, arguments: arguments)
    }

    /// ``message(_:_:)`` with its arguments as an array.
    static func message(_ message: String, arguments: [String]) -> String {
        // gettext answers the message's own pointer when it has no translation: copied
        // while that pointer is valid.
        let translated = message.withCString { text in g_dgettext(domain, text).map { String(cString: $0) } ?? message }
        return fill(translated, arguments)
    }

    /// `format` with its `%s` and `%N$s` conversions replaced by `arguments` (`%%` is `%`).
    static func fill(_ format: String, _ arguments: [String]) -> String {
        var result = ""
        var next = 0
        var rest = Substring(format)
        while let percent = rest.firstIndex(of: "%") {
            result += rest[..<percent]
            let spec = rest[rest.index(after: percent)...]
            if spec.hasPrefix("%") {
                result += "%"
                rest = spec.dropFirst()
            } else if spec.hasPrefix("s") {
                result += next < arguments.count ? arguments[next] : ""
                next += 1
                rest = spec.dropFirst()
            } else if let dollar = spec.firstIndex(of: "$"), let position = Int(spec[..<dollar]), spec[spec.index(after: dollar)...].hasPrefix("s") {
                result += position >= 1 && position <= arguments.count ? arguments[position - 1] : ""
                rest = spec[spec.index(dollar, offsetBy: 2)...]
            } else {
                result += "%"
                rest = spec
            }
        }
        return result + rest
    }

    /// gsettings' help: all of it (`command` `nil`), or one command's. An unknown command's
    /// help starts with its refusal and is all of it. `requested`: asked for (`help`),
    /// printed on standard output, status 0; else on standard error with an empty line
    /// after it, status 1 (a wrong command line).
    static func help(requested: Bool, command: String?) -> Int32 {
        var requested = requested
        var text = ""
        var entry = command.map { (command: $0, help: commandHelp[$0]) }
        if let unknown = entry, unknown.help == nil {
            text = message("Unknown command %s\n\n", unknown.command)
            requested = false
            entry = nil
        }
        if let entry, let help = entry.help {
            let synopsis = help.synopsis.isEmpty ? "" : message(help.synopsis)
            text += message("Usage:\n  gsettings [--schemadir SCHEMADIR] %s %s\n\n%s\n\n", entry.command, synopsis, message(help.description))
            text += message("Arguments:\n")
            text += message("  SCHEMADIR A directory to search for additional schemas\n")
            if help.synopsis.contains("[COMMAND]") {
                text += message("  COMMAND   The (optional) command to explain\n")
            } else if help.synopsis.contains("SCHEMA") {
                text += message("  SCHEMA    The name of the schema\n  PATH      The path, for relocatable schemas\n")
            }
            if help.synopsis.contains("[KEY]") {
                text += message("  KEY       The (optional) key within the schema\n")
            } else if help.synopsis.contains("KEY") {
                text += message("  KEY       The key within the schema\n")
            }
            if help.synopsis.contains("VALUE") { text += message("  VALUE     The value to set\n") }
            text += "\n"
        } else {
            text += message(overview)
        }
        text = text.replacingOccurrences(of: "gsettings", with: "prefs gsettings")
        if requested {
            print(text)
        } else {
            printError(text + "\n")
        }
        return requested ? 0 : 1
    }

    /// Each command's synopsis and description, gsettings' own texts.
    private static let commandHelp: [String: (synopsis: String, description: String)] = [
        "help": ("[COMMAND]", "Print help"),
        "--version": ("", "Print version information and exit"),
        "list-schemas": ("[--print-paths]", "List the installed (non-relocatable) schemas"),
        "list-relocatable-schemas": ("", "List the installed relocatable schemas"),
        "list-keys": ("SCHEMA[:PATH]", "List the keys in SCHEMA"),
        "list-children": ("SCHEMA[:PATH]", "List the children of SCHEMA"),
        "list-recursively": ("[SCHEMA[:PATH]]", "List keys and values, recursively\nIf no SCHEMA is given, list all keys\n"),
        "get": ("SCHEMA[:PATH] KEY", "Get the value of KEY"),
        "range": ("SCHEMA[:PATH] KEY", "Query the range of valid values for KEY"),
        "describe": ("SCHEMA[:PATH] KEY", "Query the description for KEY"),
        "set": ("SCHEMA[:PATH] KEY VALUE", "Set the value of KEY to VALUE"),
        "reset": ("SCHEMA[:PATH] KEY", "Reset KEY to its default value"),
        "reset-recursively": ("SCHEMA[:PATH]", "Reset all keys in SCHEMA to their defaults"),
        "writable": ("SCHEMA[:PATH] KEY", "Check if KEY is writable"),
        "monitor": (
            "SCHEMA[:PATH] [KEY]", "Monitor KEY for changes.\nIf no KEY is specified, monitor all keys in SCHEMA.\nUse ^C to stop monitoring.\n"
        ),
    ]

    /// gsettings' overview of its commands.
    private static let overview = """
        Usage:
          gsettings --version
          gsettings [--schemadir SCHEMADIR] COMMAND [ARGS…]

        Commands:
          help                      Show this information
          list-schemas              List installed schemas
          list-relocatable-schemas  List relocatable schemas
          list-keys                 List keys in a schema
          list-children             List children of a schema
          list-recursively          List keys and values, recursively
          range                     Queries the range of a key
          describe                  Queries the description of a key
          get                       Get the value of a key
          set                       Set the value of a key
          reset                     Reset the value of a key
          reset-recursively         Reset all values in a given schema
          writable                  Check if a key is writable
          monitor                   Watch for changes

        Use “gsettings help COMMAND” to get detailed help.


        """
}
