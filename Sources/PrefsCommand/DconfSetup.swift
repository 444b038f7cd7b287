import DBus
import Dconf
import Foundation
import PreferencesProxy
import Synchronization

/// The user's files that make prefsd their dconf service, and the bus calls that move the
/// running services over (`prefs dconf-switch`, `prefs dconf-switch-back`).
struct DconfSetup {
    /// The prefsd the files start.
    let prefsd: String
    private let environment = ProcessInfo.processInfo.environment

    /// The setup starting `prefsd` (default: the `prefsd` beside this `prefs`, else
    /// `/usr/bin/prefsd`).
    init(prefsd: String?) {
        if let prefsd {
            self.prefsd = URL(fileURLWithPath: prefsd).standardizedFileURL.path
        } else {
            let beside = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().deletingLastPathComponent().appendingPathComponent("prefsd").path
            self.prefsd = FileManager.default.isExecutableFile(atPath: beside) ? beside : "/usr/bin/prefsd"
        }
    }

    /// The user's D-Bus service directory, before the system's (`$XDG_DATA_HOME/dbus-1/services`).
    var servicesDirectory: URL {
        let data = environment["XDG_DATA_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((environment["HOME"] ?? "") + "/.local/share")
        return URL(fileURLWithPath: data).appendingPathComponent("dbus-1/services")
    }

    /// The user's systemd unit directory (`$XDG_CONFIG_HOME/systemd/user`).
    var unitDirectory: URL {
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? ((environment["HOME"] ?? "") + "/.config")
        return URL(fileURLWithPath: config).appendingPathComponent("systemd/user")
    }

    /// The unit's name, the same as the packaged one, which the user's file overrides.
    static let unitName = "prefsd.service"
    /// What marks the files as dconf-switch's.
    static let mark = "# Written by prefs dconf-switch; prefs dconf-switch-back removes it."

    /// Every file, with its contents.
    var files: [(URL, String)] {
        let services = [DconfBus.busName, PreferencesBus.busName, SandboxBus.busName].map { name in
            (
                servicesDirectory.appendingPathComponent("\(name).service"),
                """
                \(Self.mark)
                [D-BUS Service]
                Name=\(name)
                Exec=\(prefsd) --dconf
                SystemdService=\(Self.unitName)

                """
            )
        }
        let unit = (
            unitDirectory.appendingPathComponent(Self.unitName),
            """
            \(Self.mark)
            [Unit]
            Description=prefsd preferences service, serving dconf too (ca.desrt.dconf)
            PartOf=graphical-session.target

            [Service]
            Type=dbus
            BusName=\(DconfBus.busName)
            ExecStart=\(prefsd) --dconf
            Restart=on-failure

            [Install]
            WantedBy=default.target

            """
        )
        return services + [unit]
    }

    /// The link that starts the unit at login (what `systemctl --user enable` makes).
    var loginLink: URL { unitDirectory.appendingPathComponent("default.target.wants/\(Self.unitName)") }

    /// Writes the files that differ and the login link; returns the paths written.
    func install() throws -> [String] {
        var written: [String] = []
        for (file, contents) in files where (try? String(contentsOf: file, encoding: .utf8)) != contents {
            try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
            try contents.write(to: file, atomically: true, encoding: .utf8)
            written.append(file.path)
        }
        let target = unitDirectory.appendingPathComponent(Self.unitName).path
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: loginLink.path)) != target {
            try FileManager.default.createDirectory(at: loginLink.deletingLastPathComponent(), withIntermediateDirectories: true)
            try? FileManager.default.removeItem(at: loginLink)
            try FileManager.default.createSymbolicLink(atPath: loginLink.path, withDestinationPath: target)
            written.append(loginLink.path)
        }
        return written
    }

    /// Removes the files dconf-switch wrote (those holding its mark) and the login link;
    /// returns the paths removed.
    func uninstall() throws -> [String] {
        var removed: [String] = []
        if (try? FileManager.default.destinationOfSymbolicLink(atPath: loginLink.path)) == unitDirectory.appendingPathComponent(Self.unitName).path {
            try FileManager.default.removeItem(at: loginLink)
            removed.append(loginLink.path)
        }
        for (file, _) in files where (try? String(contentsOf: file, encoding: .utf8))?.hasPrefix(Self.mark) == true {
            try FileManager.default.removeItem(at: file)
            removed.append(file.path)
        }
        return removed
    }

    /// The newest copy of a database prefsd took in, if any.
    func newestTakenIn(_ files: DconfFiles) -> String? {
        let directory = URL(fileURLWithPath: files.databaseDirectory)
        let names = (try? FileManager.default.contentsOfDirectory(atPath: directory.path)) ?? []
        return names.filter { $0.hasPrefix(files.name + ".taken-in-") }.max().map { directory.appendingPathComponent($0).path }
    }

    /// The session bus, for the calls that move the services over.
    final class Bus: Sendable {
        private let connection: DBusConnection

        /// Connects to the session bus.
        init() throws {
            do {
                connection = try DBusConnection.connectToSessionBus()
            } catch {
                throw PrefsError.noBus(detail: "\(error)")
            }
        }

        func close() { connection.close() }

        /// Makes the bus (and systemd's user manager, if one runs) read the service files again.
        func reload() async throws {
            do {
                _ = try await connection.call(
                    .methodCall(destination: BusDriver.name, path: BusDriver.path, interface: BusDriver.interface, member: "ReloadConfig"))
            } catch {
                throw PrefsError.serviceUnavailable(detail: "the session bus did not reload its service files: \(error)")
            }
            let runtime = ProcessInfo.processInfo.environment["XDG_RUNTIME_DIR"] ?? ""
            if !runtime.isEmpty, FileManager.default.fileExists(atPath: runtime + "/systemd/private") {
                let reload = Process()
                reload.executableURL = URL(fileURLWithPath: "/usr/bin/systemctl")
                reload.arguments = ["--user", "daemon-reload"]
                try? reload.run()
                reload.waitUntilExit()
            }
        }

        /// Stops the process owning `name` unless its command line passes `keep`, and waits
        /// until the name is free; returns what was stopped. SIGTERM first (prefsd finishes
        /// its writes and exits); what still runs 3 s later gets SIGKILL: dconf-service only
        /// lets go of its hold on SIGTERM and stays for its idle time-out, and it writes each
        /// change before answering it, so it holds nothing unwritten.
        func stopOwner(of name: String, unless keep: (String) -> Bool) async throws -> String? {
            guard try await connection.nameHasOwner(name) else { return nil }
            let pid = try await connection.getConnectionUnixProcessID(name)
            let commandLine =
                (try? Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/cmdline")))
                .map { String(decoding: $0.map { $0 == 0 ? UInt8(ascii: " ") : $0 }, as: UTF8.self) } ?? ""
            if keep(commandLine) { return nil }
            kill(pid_t(pid), SIGTERM)
            let start = ContinuousClock.now
            var killed = false
            while try await connection.nameHasOwner(name) {
                let waited = ContinuousClock.now - start
                if waited > .seconds(3), !killed {
                    kill(pid_t(pid), SIGKILL)
                    killed = true
                }
                guard waited < .seconds(30) else {
                    throw PrefsError.serviceUnavailable(
                        detail: "process \(pid) (\(commandLine)) still owns \(name) 30 s after SIGKILL; stop it and run this again")
                }
                try await Task.sleep(for: .milliseconds(20))
            }
            return "\(commandLine.trimmingCharacters(in: .whitespaces)) (pid \(pid))"
        }

        /// Starts what serves `name` (the bus activates it) and returns its process ID.
        func start(_ name: String) async throws -> UInt32 {
            do {
                _ = try await connection.call(
                    .methodCall(
                        destination: BusDriver.name, path: BusDriver.path, interface: BusDriver.interface, member: "StartServiceByName",
                        body: [.string(name), .uint32(0)]))
                return try await connection.getConnectionUnixProcessID(name)
            } catch {
                throw PrefsError.serviceUnavailable(detail: "the bus could not start \(name): \(error)")
            }
        }

        /// Starts prefsd as dconf's service (the bus activates it) and returns its process
        /// ID. A prefsd that will not serve dconf (it cannot take dconf's database in) owns
        /// its own name but never dconf's, and the bus would wait for it until its
        /// activation time-out: so, meanwhile, once prefsd owns its own name, its dconf
        /// writer is asked (`Init`, with no auto-start) whether it serves, and its refusal
        /// ends the wait at once, with prefsd's reason.
        func startDconf(database: String) async throws -> UInt32 {
            let outcome = StartOutcome()
            let started = Task { [self] in
                do {
                    outcome.set(.success(try await start(DconfBus.busName)))
                } catch {
                    outcome.set(.failure(error))
                }
            }
            while true {
                if let result = outcome.result { return try result.get() }
                if try await connection.nameHasOwner(PreferencesBus.busName), let refusal = await dconfRefusal(database: database) {
                    started.cancel()
                    throw PrefsError.serviceUnavailable(
                        detail:
                            "prefsd started but does not serve dconf: \(refusal); its log says more (journalctl --user -u prefsd); prefs dconf-switch-back puts dconf-service back"
                    )
                }
                try await Task.sleep(for: .milliseconds(50))
            }
        }

        /// How a start the bus was asked for ended, once it has.
        private final class StartOutcome: Sendable {
            private let state = Mutex<Result<UInt32, any Error>?>(nil)

            var result: Result<UInt32, any Error>? { state.withLock { $0 } }

            func set(_ result: Result<UInt32, any Error>) { state.withLock { $0 = result } }
        }

        /// Why the prefsd owning its own name does not serve dconf, or `nil` when it does or
        /// cannot tell yet (it is still starting).
        private func dconfRefusal(database: String) async -> String? {
            var call = DBusMessage.methodCall(
                destination: PreferencesBus.busName, path: DconfBus.writerPath(database: database), interface: DconfBus.writerInterface,
                member: DconfBus.initMethod)
            call.autoStart = false
            do {
                _ = try await connection.call(call)
                return nil
            } catch let error where error.isRemote(named: StandardErrorName.failed) {
                guard error.message.hasPrefix(DconfBus.refusalPrefix) else { return nil }
                let reason = String(error.message.dropFirst(DconfBus.refusalPrefix.count))
                return reason == DconfBus.startingReason ? nil : reason
            } catch {
                return nil
            }
        }
    }
}
