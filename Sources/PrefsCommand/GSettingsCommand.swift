import ArgumentParser

extension Prefs {
    /// `prefs gsettings [--schemadir DIR] VERB …`: gsettings' verbs over prefsd.
    public struct GSettingsCommand: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "gsettings",
            abstract: "Answer gsettings' verbs from prefsd: the same arguments, output and exit statuses.",
            discussion: """
                prefs gsettings [--schemadir DIR] VERB [SCHEMA[:PATH] [KEY [VALUE]]] takes \
                gsettings(1)'s verbs (get, set, reset, reset-recursively, range, describe, \
                list-schemas [--print-paths], list-relocatable-schemas, list-keys, \
                list-children, list-recursively, writable, monitor, help, --version) and \
                arguments, values in GVariant text (a negative number is a value, not an \
                option), and prints what gsettings prints, byte for byte, with its exit \
                statuses (1 for every refusal): a script can call `prefs gsettings` where it \
                called `gsettings`. It reads and writes prefsd itself, with no GIO module or \
                GSETTINGS_BACKEND: a key lives where the GSettings path rule puts it, stored \
                as prefsd's GSettings module stores it, and is read with GLib's own GSettings \
                (the schema's defaults, ranges and aliases).

                Beyond gsettings: set, reset and reset-recursively are recorded in prefsd's \
                history (who: prefs); a key an administrator forces is refused with the \
                reason; and nothing is changed where the session's GSettings programs would \
                not read it. They read prefsd with GSETTINGS_BACKEND=prefsd, else dconf's \
                database, which prefsd keeps only while it serves dconf's name (prefsd \
                --dconf, `prefs dconf-switch`); set then writes through dconf's protocol to \
                prefsd, so that the database holds the schema's type (uint32 600 for a `u` \
                key). writable says false where set would refuse. Failures of prefs's own \
                (no bus, prefsd's store) keep prefs's exit statuses.

                Examples:
                  prefs gsettings get org.gnome.desktop.interface color-scheme
                  prefs gsettings set org.gnome.desktop.session idle-delay 600
                  prefs gsettings set org.gnome.desktop.peripherals.mouse speed -0.5
                  prefs gsettings list-recursively org.gnome.desktop.interface
                  prefs gsettings monitor org.gnome.desktop.interface
                """
        )

        /// Everything after `gsettings`, as gsettings reads its arguments.
        @Argument(
            parsing: .captureForPassthrough,
            help: ArgumentHelp("[--schemadir DIR] VERB and its arguments, as gsettings takes them.", valueName: "arguments"))
        var arguments: [String] = []

        /// Creates the verb (ArgumentParser fills in its arguments).
        public init() {}

        /// Runs the verb as gsettings would; a status other than 0 ends prefs with it.
        public func run() async throws {
            if let first = arguments.first, first == "--help" || first == "-h" {
                throw CleanExit.helpRequest(self)
            }
            let status = try await GSettingsInvocation.run(arguments)
            if status != 0 { throw ExitCode(status) }
        }
    }
}
