import ArgumentParser
import DBus
import Dconf
import Foundation
import PreferencesProxy

extension Prefs {
    /// `prefs dconf-switch`: prefsd takes dconf-service's place for this user.
    public struct DconfSwitch: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "dconf-switch",
            abstract: "Make prefsd this user's dconf service: every dconf client then stores in prefsd.",
            discussion: """
                Writes the user's D-Bus service files for ca.desrt.dconf and prefsd's names \
                (in $XDG_DATA_HOME/dbus-1/services, which comes before the system's) and a \
                systemd user unit, all starting `prefsd --dconf`, and starts prefsd at login. \
                Then stops the running dconf-service (or a prefsd without --dconf) and starts \
                prefsd, which takes in the user's dconf database whole, exact to the \
                GVariant bytes, before anything else is written, and keeps the file aside \
                ($XDG_CONFIG_HOME/dconf/user.taken-in-TIME). Running it again changes \
                nothing. Back: prefs dconf-switch-back.
                """
        )

        /// The prefsd to start.
        @Option(help: ArgumentHelp("The prefsd executable (default: the one beside prefs).", valueName: "path"))
        var prefsd: String?

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Writes the files and moves the running services over.
        public func run() async throws {
            let setup = DconfSetup(prefsd: prefsd)
            let written = try setup.install()
            Output.line(written.isEmpty ? "the service files already start prefsd --dconf" : written.map { "wrote \($0)" }.joined(separator: "\n"))
            let bus = try DconfSetup.Bus()
            defer { bus.close() }
            try await bus.reload()
            for name in [DconfBus.busName, PreferencesBus.busName] {
                if let stopped = try await bus.stopOwner(of: name, unless: { $0.contains("--dconf") }) {
                    Output.line("stopped \(stopped) (it owned \(name))")
                }
            }
            let files = DconfFiles(name: "user", environment: ProcessInfo.processInfo.environment)
            let pid = try await bus.startDconf(database: files.name)
            Output.line("prefsd (pid \(pid)) serves \(DconfBus.busName); dconf's database \(files.databasePath) mirrors its store")
            if let aside = setup.newestTakenIn(files) {
                Output.line("dconf's database as dconf-service left it is kept in \(aside)")
            }
        }
    }

    /// `prefs dconf-switch-back`: dconf-service serves this user's dconf again.
    public struct DconfSwitchBack: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "dconf-switch-back",
            abstract: "Hand dconf back to dconf-service, on a database that holds every current value.",
            discussion: """
                Removes what dconf-switch wrote, stops prefsd (it finishes every write and \
                leaves dconf's database holding every value it has), and keeps a copy of that \
                database for a later dconf-switch (to tell the keys reset under dconf-service \
                meanwhile). The next dconf client starts dconf-service on that database; \
                prefsd goes on serving its own interface. Running it again changes nothing.
                """
        )

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Removes the files and hands the name back.
        public func run() async throws {
            let setup = DconfSetup(prefsd: nil)
            let removed = try setup.uninstall()
            Output.line(removed.isEmpty ? "no service file of dconf-switch was left" : removed.map { "removed \($0)" }.joined(separator: "\n"))
            let bus = try DconfSetup.Bus()
            defer { bus.close() }
            try await bus.reload()
            if let stopped = try await bus.stopOwner(of: DconfBus.busName, unless: { !$0.contains("prefsd") }) {
                Output.line("stopped \(stopped) (it owned \(DconfBus.busName))")
            }
            // A prefsd started with --dconf that did not serve dconf (it could not take the
            // database in) still owns prefsd's own name: the packaged service starts it again
            // without --dconf.
            if let stopped = try await bus.stopOwner(of: PreferencesBus.busName, unless: { !$0.contains("--dconf") }) {
                Output.line("stopped \(stopped) (it owned \(PreferencesBus.busName))")
            }
            let files = DconfFiles(name: "user", environment: ProcessInfo.processInfo.environment)
            if let bytes = try? DconfFiles.contents(of: files.databasePath), DconfMirror.isMirror(bytes) {
                try DconfFiles.replace(files.handedBackPath, with: bytes, synced: true)
                Output.line("dconf's database \(files.databasePath) holds every value; dconf-service starts on it when a dconf client next calls")
            }
        }
    }
}
