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
                systemd user unit (a drop-in, prefsd.service.d/dconf-switch.conf, when the user \
                has a prefsd.service of their own), all starting `prefsd --dconf` (dconf-service \
                when prefsd is no longer installed), and starts prefsd at login. A file of the \
                user's where one of these goes is kept aside (NAME.before-dconf-switch) and put \
                back by dconf-switch-back. Then stops the running dconf-service (or a prefsd \
                without --dconf) and starts prefsd, which takes in the user's dconf database \
                whole, exact to the GVariant bytes, before anything else is written, and keeps \
                the file aside ($XDG_CONFIG_HOME/dconf/user.taken-in-TIME; the newest 3 are \
                kept). When prefsd cannot serve, it says why and puts dconf-service back. \
                Running it again changes nothing. Back: prefs dconf-switch-back.
                """
        )

        /// The prefsd to start.
        @Option(help: ArgumentHelp("The prefsd executable (default: the one beside prefs).", valueName: "path"))
        var prefsd: String?

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Writes the files and moves the running services over; puts dconf-service back
        /// when prefsd cannot serve.
        public func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let setup = SwitchSetup(prefsd: prefsd, environment: environment).with(.dconf, on: true)
            try setup.checkPath()
            let files = DconfFiles(name: "user", environment: environment)
            let bus = try DconfSwitchBus()
            defer { bus.close() }
            let dconfOwner = try await bus.owner(of: DconfBus.busName)
            let prefsdOwner = try await bus.owner(of: PreferencesBus.busName)
            let serving = dconfOwner?.serves(.dconf) == true ? dconfOwner : nil
            try Self.checkStore(environment: environment, owners: [dconfOwner, prefsdOwner].compactMap { $0 })

            let takenInBefore = DconfCopies.takenIn(files)
            do {
                let written = try setup.install()
                Output.line(written.isEmpty ? "the service files already start prefsd --dconf" : written.joined(separator: "\n"))
                try await bus.reload()
                if let dconfOwner, serving == nil {
                    try await bus.stop(dconfOwner, owning: DconfBus.busName, killing: true)
                    Output.line("stopped \(dconfOwner.description) (it owned \(DconfBus.busName))")
                }
                if let prefsdOwner, prefsdOwner.process.pid != serving?.process.pid {
                    try await bus.stop(prefsdOwner, owning: PreferencesBus.busName, killing: false)
                    Output.line("stopped \(prefsdOwner.description) (it owned \(PreferencesBus.busName))")
                }
                let pid = try await bus.startDconf(database: files.name)
                Output.line("prefsd (pid \(pid)) serves \(DconfBus.busName); dconf's database \(files.databasePath) mirrors its store")
            } catch {
                throw await Self.undo(error, setup: setup, bus: bus, files: files)
            }
            if let taken = DconfCopies.takenIn(files).last(where: { !takenInBefore.contains($0) }) {
                Output.line("dconf's database as dconf-service left it is kept in \(taken)")
            } else {
                Output.line("nothing new to take in: dconf's database is the one prefsd wrote")
            }
            for removed in DconfCopies.pruneTakenIn(files) {
                Output.line("removed \(removed) (the newest \(DconfCopies.takenInKept) copies of what prefsd took in are kept)")
            }
        }

        /// Refuses the switch, before anything is changed, when a prefsd that is not on this
        /// bus (not one of `owners`) serves the store the new prefsd would open: it would
        /// wait for the store and exit.
        static func checkStore(environment: [String: String], owners: [DconfSwitchBus.Owner]) throws(PrefsError) {
            let store = StoreHolder.defaultDirectory(environment: environment)
            guard let holder = StoreHolder.process(holding: store), !owners.contains(where: { $0.process.pid == holder }) else { return }
            let commandLine = ProcessHandle(pid: holder)?.commandLine ?? "a process"
            throw .serviceUnavailable(
                detail:
                    "another prefsd (\(commandLine), pid \(holder)) serves the store \(store) but not on this session's bus (it is another session's, or was started with --address), so the prefsd this would start cannot open it; stop it and run this again (nothing was changed)"
            )
        }

        /// Puts dconf-service back after `error` stopped the switch, saying what it did; returns
        /// the error to end with.
        private static func undo(_ error: any Error, setup: SwitchSetup, bus: DconfSwitchBus, files: DconfFiles) async -> PrefsError {
            let reason = (error as? PrefsError)?.description ?? "\(error)"
            do {
                for line in try await DconfSwitchBack.handBack(setup: setup, bus: bus, files: files) { Output.line(line) }
                return .serviceUnavailable(detail: "\(reason); the switch was undone: dconf-service serves dconf again")
            } catch {
                return .serviceUnavailable(detail: "\(reason); putting dconf-service back failed too (\(error.description)): run prefs dconf-switch-back")
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
                Removes what dconf-switch wrote and puts back the user's files it kept aside, \
                stops prefsd (it finishes every write and leaves dconf's database holding every \
                value it has), and keeps a copy of that database for a later dconf-switch (to \
                tell the keys reset under dconf-service meanwhile). The next dconf client starts \
                dconf-service on that database; prefsd goes on serving its own interface. \
                Running it again changes nothing.
                """
        )

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Removes the files and hands the name back.
        public func run() async throws {
            let setup = SwitchSetup(prefsd: nil)
            let bus = try DconfSwitchBus()
            defer { bus.close() }
            let files = DconfFiles(name: "user", environment: ProcessInfo.processInfo.environment)
            for line in try await Self.handBack(setup: setup, bus: bus, files: files) { Output.line(line) }
        }

        /// Removes the switch's files, stops the prefsd serving dconf (or started to) and
        /// keeps the copy of dconf's database it leaves; returns what it did, a line each.
        static func handBack(setup: SwitchSetup, bus: DconfSwitchBus, files: DconfFiles) async throws(PrefsError) -> [String] {
            let removed = try setup.uninstall(.dconf)
            var lines = removed.isEmpty ? ["no service file of dconf-switch was left"] : removed
            try await bus.reload()
            var watch = MirrorWatch(files: files)
            watch.look()
            var stopped: Set<pid_t> = []
            // A prefsd started with --dconf that did not serve dconf (it could not take the
            // database in) owns prefsd's own name alone: the packaged service starts it
            // again without --dconf.
            for name in [DconfBus.busName, PreferencesBus.busName] {
                guard let owner = try await bus.owner(of: name), owner.serves(.dconf) else { continue }
                try await bus.stop(owner, owning: name, killing: false) { watch.look() }
                if stopped.insert(owner.process.pid).inserted { lines.append("stopped \(owner.description) (it owned \(name))") }
            }
            if try DconfCopies.handBack(files, latest: watch.latest) {
                lines.append("dconf's database \(files.databasePath) holds every value; dconf-service starts on it when a dconf client next calls")
            }
            return lines
        }
    }
}
