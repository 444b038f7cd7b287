import ArgumentParser
import PreferencesModel
import SettingsApp

/// `prefs-settings`: the Settings app's command line. ArgumentParser gives it `--help`,
/// `--version` and its man page (scripts/build-man); the window is SettingsApp's.
@main
struct PrefsSettings: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "prefs-settings",
        abstract: "Browse and edit the preferences prefsd serves, in a window.",
        discussion: """
            The sidebar lists the applications that have a settings bundle, then every other \
            domain, those that installed GSettings schemas describe included. A domain name \
            (com.example.Editor) opens that domain: its bundle's pages, its schema pages, or \
            its keys in the raw editor. A GSettings path opens the schema \
            page of that directory (/org/gnome/desktop/interface/) or that key's page \
            (/org/gnome/desktop/interface/color-scheme). The app talks to prefsd on the \
            session bus (DBUS_SESSION_BUS_ADDRESS), which starts prefsd if it is not running.

            Exit status: 0 when the window was closed, 69 when the session bus or prefsd \
            could not be reached.
            """,
        version: PrefsdVersion.current
    )

    @Argument(
        help: ArgumentHelp(
            "The domain (com.example.Editor) or GSettings path (/org/gnome/desktop/interface/) to open.",
            valueName: "domain-or-path"))
    var target: String?

    @Flag(help: "Open the domain's History page: its past values, and undoing a change.")
    var history = false

    /// Creates the command (ArgumentParser fills in its options).
    init() {}

    func run() throws {
        var arguments = ["prefs-settings"]
        if let target { arguments.append(target) }
        if history { arguments.append("--history") }
        let status = SettingsApp.main(arguments: arguments)
        if status != 0 { throw ExitCode(status) }
    }
}
