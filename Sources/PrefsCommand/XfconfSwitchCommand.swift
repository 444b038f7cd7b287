import ArgumentParser
import Foundation
import PreferencesProxy
import Xfconf

extension Prefs {
    /// `prefs xfconf-switch`: prefsd takes xfconfd's place for this user.
    public struct XfconfSwitch: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "xfconf-switch",
            abstract: "Make prefsd this user's xfconf service: every Xfce program then stores in prefsd.",
            discussion: """
                Writes the user's D-Bus service files for org.xfce.Xfconf and prefsd's names \
                (in $XDG_DATA_HOME/dbus-1/services, which comes before the system's) and a \
                systemd user unit (a drop-in, prefsd.service.d/dconf-switch.conf, when the user \
                has a prefsd.service of their own), all starting `prefsd --xfconf` (with \
                --dconf too after dconf-switch; xfconfd when prefsd is no longer installed), and \
                starts prefsd at login. A file of the user's where one of these goes is kept \
                aside (NAME.before-dconf-switch) and put back by xfconf-switch-back. Then stops \
                the running xfconfd (it writes every channel first) and a prefsd without \
                --xfconf, and starts prefsd, which takes in the user's channel files \
                ($XDG_CONFIG_HOME/xfce4/xfconf/xfce-perchannel-xml/*.xml) exactly, keeping a \
                copy of each beside it (C.xml.taken-in-TIME). When prefsd cannot serve, it says \
                why and puts xfconfd back. Running it again changes nothing. Back: prefs \
                xfconf-switch-back.
                """
        )

        /// The prefsd to start.
        @Option(help: ArgumentHelp("The prefsd executable (default: the one beside prefs).", valueName: "path"))
        var prefsd: String?

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Writes the files and moves the running services over; puts xfconfd back when
        /// prefsd cannot serve.
        public func run() async throws {
            let environment = ProcessInfo.processInfo.environment
            let setup = SwitchSetup(prefsd: prefsd, environment: environment).with(.xfconf, on: true)
            try setup.checkPath()
            let bus = try DconfSwitchBus()
            defer { bus.close() }
            let xfconfOwner = try await bus.owner(of: SwitchSetup.Service.xfconf.busName)
            let prefsdOwner = try await bus.owner(of: PreferencesBus.busName)
            let serving = xfconfOwner?.serves(.xfconf) == true ? xfconfOwner : nil
            try DconfSwitch.checkStore(environment: environment, owners: [xfconfOwner, prefsdOwner].compactMap { $0 })
            let folder = XfconfFolders.user(environment: environment)
            let takenInBefore = Self.takenIn(folder)
            do {
                let written = try setup.install()
                Output.line(written.isEmpty ? "the service files already start prefsd --xfconf" : written.joined(separator: "\n"))
                try await bus.reload()
                if let xfconfOwner, serving == nil {
                    // xfconfd writes every channel when it stops: waited for, not killed.
                    try await XfconfSwitchBack.stopWriting(xfconfOwner, owning: SwitchSetup.Service.xfconf.busName, bus: bus)
                    Output.line("stopped \(xfconfOwner.description) (it owned \(SwitchSetup.Service.xfconf.busName))")
                }
                if let prefsdOwner, prefsdOwner.process.pid != serving?.process.pid {
                    try await XfconfSwitchBack.stopWriting(prefsdOwner, owning: PreferencesBus.busName, bus: bus)
                    Output.line("stopped \(prefsdOwner.description) (it owned \(PreferencesBus.busName))")
                }
                let pid = try await bus.start(SwitchSetup.Service.xfconf.busName)
                guard let started = ProcessHandle(pid: pid_t(pid)), started.arguments.dropFirst().contains("--xfconf") else {
                    throw PrefsError.serviceUnavailable(
                        detail:
                            "\(SwitchSetup.Service.xfconf.busName) was started, but not by a prefsd serving xfconf (pid \(pid)); is prefsd at \(setup.prefsd)?")
                }
                Output.line(
                    "prefsd (pid \(pid)) serves \(SwitchSetup.Service.xfconf.busName); the channel files in \(folder) are written from its store when it stops")
            } catch {
                throw await Self.undo(error, setup: SwitchSetup(prefsd: prefsd, environment: environment), bus: bus)
            }
            let taken = Self.takenIn(folder).subtracting(takenInBefore).sorted()
            Output.line(
                taken.isEmpty
                    ? "nothing new to take in: the channel files are those prefsd wrote"
                    : "the channel files as xfconfd left them are kept in \(taken.joined(separator: ", "))")
        }

        /// Puts xfconfd back after `error` stopped the switch, saying what it did; returns the
        /// error to end with.
        private static func undo(_ error: any Error, setup: SwitchSetup, bus: DconfSwitchBus) async -> PrefsError {
            let reason = (error as? PrefsError)?.description ?? "\(error)"
            do {
                for line in try await XfconfSwitchBack.handBack(setup: setup, bus: bus) { Output.line(line) }
                return .serviceUnavailable(detail: "\(reason); the switch was undone: xfconfd serves xfconf again")
            } catch {
                return .serviceUnavailable(detail: "\(reason); putting xfconfd back failed too (\(error.description)): run prefs xfconf-switch-back")
            }
        }

        /// The copies of channel files prefsd took in, in `folder`.
        private static func takenIn(_ folder: String) -> Set<String> {
            let names = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return Set(names.filter { $0.contains(".xml.taken-in-") }.map { folder + "/" + $0 })
        }
    }

    /// `prefs xfconf-switch-back`: xfconfd serves this user's xfconf again.
    public struct XfconfSwitchBack: AsyncParsableCommand {
        /// The verb's name and help.
        public static let configuration = CommandConfiguration(
            commandName: "xfconf-switch-back",
            abstract: "Hand xfconf back to xfconfd, on channel files that hold every current value.",
            discussion: """
                Removes what xfconf-switch wrote (after dconf-switch, prefsd's own files then \
                start it with --dconf alone) and puts back the user's files it kept aside, and \
                stops prefsd, which finishes every write and leaves the user's channel files \
                ($XDG_CONFIG_HOME/xfce4/xfconf/xfce-perchannel-xml) holding every value it has, \
                in xfconfd's format. The next xfconf client starts xfconfd on them; prefsd goes \
                on serving its own interface. Running it again changes nothing.
                """
        )

        /// Creates the verb (ArgumentParser fills in its options).
        public init() {}

        /// Removes the files and hands the name back.
        public func run() async throws {
            let bus = try DconfSwitchBus()
            defer { bus.close() }
            for line in try await Self.handBack(setup: SwitchSetup(prefsd: nil), bus: bus) { Output.line(line) }
        }

        /// Takes xfconf out of the switch's files, stops the prefsd serving xfconf (it writes
        /// the channel files first) and waits until it has exited; returns what it did, a
        /// line each.
        static func handBack(setup: SwitchSetup, bus: DconfSwitchBus) async throws(PrefsError) -> [String] {
            let removed = try setup.uninstall(.xfconf)
            var lines = removed.isEmpty ? ["no service file of xfconf-switch was left"] : removed
            try await bus.reload()
            var stopped: Set<pid_t> = []
            for name in [SwitchSetup.Service.xfconf.busName, PreferencesBus.busName] {
                guard let owner = try await bus.owner(of: name), owner.serves(.xfconf) else { continue }
                try await stopWriting(owner, owning: name, bus: bus)
                if stopped.insert(owner.process.pid).inserted { lines.append("stopped \(owner.description) (it owned \(name))") }
            }
            lines.append(
                "the channel files in \(XfconfFolders.user(environment: ProcessInfo.processInfo.environment)) hold every value; xfconfd starts on them when an xfconf client next calls"
            )
            return lines
        }

        /// Stops `owner` (SIGTERM) and waits until it has exited: prefsd and xfconfd write
        /// the channel files when they stop, after letting go of their names.
        static func stopWriting(_ owner: DconfSwitchBus.Owner, owning name: String, bus: DconfSwitchBus) async throws(PrefsError) {
            try await bus.stop(owner, owning: name, killing: false)
            let start = ContinuousClock.now
            while !owner.process.hasExited {
                guard ContinuousClock.now - start < .seconds(30) else {
                    throw .serviceUnavailable(detail: "\(owner.description) still runs 30 s after SIGTERM; stop it and run this again")
                }
                try? await Task.sleep(for: .milliseconds(20))
            }
        }
    }
}
